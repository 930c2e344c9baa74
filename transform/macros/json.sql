{#-
  The loaders store the streams' nested fields differently:
    target-postgres 0.8.1: objects as jsonb, arrays as Postgres arrays (jsonb[] / text[]),
                           date-times as timestamp without time zone (UTC)
    target-duckdb 0.8.0:   objects and arrays as JSON, date-times as TIMESTAMP (UTC),
                           integers as HUGEINT
    z3-target-bigquery 0.7.2 with denormalized: true (not run here: compiled only):
                           objects as RECORD (STRUCT), arrays as REPEATED (ARRAY, never
                           NULL), date-times as TIMESTAMP
  These macros give the staging models one way to read them (adapter dispatch).
-#}

{#- The value as JSON (a JSON array for array columns, a JSON object for objects), typed so
    that JSON operators work on it: jsonb on PostgreSQL, JSON on DuckDB. BigQuery keeps a
    JSON string: its JSON type cannot be compared with =, which feed_item_versions does. -#}
{% macro json_value(column) -%}
  {{ return(adapter.dispatch('json_value', 'feeddelta')(column)) }}
{%- endmacro %}

{% macro default__json_value(column) -%}
  cast({{ column }} as {{ dbt.type_string() }})
{%- endmacro %}

{% macro postgres__json_value(column) -%}
  to_jsonb({{ column }})
{%- endmacro %}

{% macro duckdb__json_value(column) -%}
  cast({{ column }} as json)
{%- endmacro %}

{% macro bigquery__json_value(column) -%}
  to_json_string({{ column }})
{%- endmacro %}


{#- A top-level field of a JSON object column, as text. -#}
{% macro json_field_text(column, key) -%}
  {{ return(adapter.dispatch('json_field_text', 'feeddelta')(column, key)) }}
{%- endmacro %}

{% macro default__json_field_text(column, key) -%}
  ({{ column }} ->> '{{ key }}')
{%- endmacro %}

{% macro duckdb__json_field_text(column, key) -%}
  json_extract_string({{ column }}, '$.{{ key }}')
{%- endmacro %}

{% macro bigquery__json_field_text(column, key) -%}
  cast({{ column }}.{{ key }} as string)
{%- endmacro %}


{#- Number of elements of an array column (0 when null). -#}
{% macro json_array_length(column) -%}
  {{ return(adapter.dispatch('json_array_length', 'feeddelta')(column)) }}
{%- endmacro %}

{% macro default__json_array_length(column) -%}
  coalesce(json_array_length({{ column }}), 0)
{%- endmacro %}

{% macro postgres__json_array_length(column) -%}
  coalesce(cardinality({{ column }}), 0)
{%- endmacro %}

{% macro bigquery__json_array_length(column) -%}
  array_length({{ column }})
{%- endmacro %}


{#- A list of distinct strings aggregated into one sorted, comma-separated text. -#}
{% macro sorted_list(expression) -%}
  {{ return(adapter.dispatch('sorted_list', 'feeddelta')(expression)) }}
{%- endmacro %}

{% macro default__sorted_list(expression) -%}
  string_agg({{ expression }}, ', ' order by {{ expression }})
{%- endmacro %}
