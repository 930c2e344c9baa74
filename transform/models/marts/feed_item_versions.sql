-- Every delivered version of every item, in order, with what changed since the previous one.
-- Versions of one item are ordered by checked_at (delivery_id breaks ties). The first
-- version has no previous one: it is change_type new, or updated when the item was already
-- in the baseline (first_run_mode baseline_only) before it changed, or when its first
-- change was delivered again later under its delivery_id (a --full-refresh, an item
-- forgotten and re-added, the same edit made again): the upsert moved that row.
{%- set compared = ['url', 'title', 'summary', 'content_text', 'published_at', 'updated_at',
                    'authors_json', 'tags_json', 'enclosures_json'] %}
{%- set item_window = "over (partition by item_key order by checked_at, delivery_id)" %}

with items as (

    select * from {{ ref('stg_feed_items') }}

),

ordered as (

    select
        items.*,
        cast(row_number() {{ item_window }} as {{ dbt.type_bigint() }}) as version_number,
        lag(delivery_id) {{ item_window }} as previous_delivery_id,
        lag(checked_at) {{ item_window }} as previous_checked_at,
        lag(fingerprint) {{ item_window }} as previous_fingerprint,
        {%- for field in compared %}
        lag({{ field }}) {{ item_window }} as previous_{{ field }}{{ "," if not loop.last }}
        {%- endfor %}
    from items

),

flagged as (

    select
        ordered.*,
        {%- for field in compared %}
        case
            when previous_delivery_id is null then 0
            when {{ field }} is null and previous_{{ field }} is null then 0
            when {{ field }} = previous_{{ field }} then 0
            else 1
        end as {{ field | replace('_json', '') }}_diff{{ "," if not loop.last }}
        {%- endfor %}
    from ordered

)

select
    delivery_id,
    item_key,
    monitor_id,
    feed_url,
    item_id,
    version_number,
    change_type,
    checked_at,
    checked_on,
    fingerprint,
    previous_delivery_id is not null as has_previous_version,
    previous_delivery_id,
    previous_checked_at,
    previous_fingerprint,
    case
        when previous_delivery_id is null then null
        else nullif(rtrim(
            {%- for field in compared %}
            case when {{ field | replace('_json', '') }}_diff = 1 then '{{ field | replace('_json', '') }}, ' else '' end{{ " ||" if not loop.last }}
            {%- endfor %}
        , ', '), '')
    end as changed_fields,
    (
        {%- for field in compared %}
        {{ field | replace('_json', '') }}_diff{{ " +" if not loop.last }}
        {%- endfor %}
    ) as changed_field_count,
    url,
    title,
    summary,
    content_text,
    published_at,
    updated_at,
    authors_json,
    tags_json,
    enclosures_json,
    issues_json,
    issue_count,
    feed_title,
    feed_format,
    final_url,
    id_source,
    source_pointer
from flagged
