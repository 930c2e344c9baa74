-- The latest delivered version of each item, per monitor and feed.
with versions as (

    select
        *,
        cast(count(*) over (partition by item_key) as {{ dbt.type_bigint() }}) as version_count,
        min(checked_at) over (partition by item_key) as first_delivered_at,
        row_number() over (partition by item_key order by version_number desc) as recency
    from {{ ref('feed_item_versions') }}

)

select
    item_key,
    monitor_id,
    feed_url,
    item_id,
    delivery_id,
    version_number,
    version_count,
    change_type,
    first_delivered_at,
    checked_at as last_delivered_at,
    fingerprint,
    changed_fields,
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
    id_source
from versions
where recency = 1
