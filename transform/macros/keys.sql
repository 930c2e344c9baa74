{#-
  The models' keys (item_key, check_id, feed_day_id, feed_error_day_id): a hash of several
  text parts joined with '|'. A feed URL or an item id may hold '|' itself (?tags=a|b), so
  each '|' inside a part is written '|' + U+001F (unit separator), which no record string
  holds: two different lists of parts never give the same text. A part without '|' reads as
  before, so such keys are the ones earlier versions built.
-#}
{% macro key_hash(parts) -%}
  {%- set escaped = [] -%}
  {%- for part in parts -%}
    {%- do escaped.append("replace(" ~ part ~ ", '|', " ~ dbt.concat(["'|'", feeddelta.unit_separator()]) ~ ")") -%}
    {%- if not loop.last %}{% do escaped.append("'|'") %}{% endif -%}
  {%- endfor -%}
  {{ dbt.hash(dbt.concat(escaped)) }}
{%- endmacro %}

{#- U+001F as a string expression. -#}
{% macro unit_separator() -%}
  {{ return(adapter.dispatch('unit_separator', 'feeddelta')()) }}
{%- endmacro %}

{% macro default__unit_separator() -%}
  chr(31)
{%- endmacro %}

{% macro bigquery__unit_separator() -%}
  '\x1f'
{%- endmacro %}
