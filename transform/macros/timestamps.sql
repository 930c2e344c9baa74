{#-
  The loaders store the streams' date-times as UTC without a zone (target-postgres:
  timestamp without time zone; target-duckdb: TIMESTAMP; see json.sql). The models give them
  out as absolute instants, so that a session in any time zone compares them with now() or
  another instant correctly: timestamptz on PostgreSQL and DuckDB, TIMESTAMP on BigQuery
  (already absolute).
-#}

{#- A UTC date-time column of the loaded streams as an absolute instant. -#}
{% macro utc_timestamp(column) -%}
  {{ return(adapter.dispatch('utc_timestamp', 'feeddelta')(column)) }}
{%- endmacro %}

{% macro default__utc_timestamp(column) -%}
  cast({{ column }} as {{ dbt.type_timestamp() }})
{%- endmacro %}

{#- Read as UTC whatever the session's TimeZone (a cast to timestamptz would read it in the
    session's zone). -#}
{% macro postgres__utc_timestamp(column) -%}
  (cast({{ column }} as timestamp) at time zone 'UTC')
{%- endmacro %}

{% macro duckdb__utc_timestamp(column) -%}
  (cast({{ column }} as timestamp) at time zone 'UTC')
{%- endmacro %}

{% macro bigquery__utc_timestamp(column) -%}
  cast({{ column }} as timestamp)
{%- endmacro %}
