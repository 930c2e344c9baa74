{#- Fails for every combination of the columns that more than one row holds: a key of several
    columns (dbt's own unique takes one). -#}
{% test unique_combination(model, columns) %}

select
    {{ columns | join(', ') }},
    count(*) as row_count
from {{ model }}
group by {{ columns | join(', ') }}
having count(*) > 1

{% endtest %}
