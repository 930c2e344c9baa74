-- One row per delivered item version (delivery_id), typed and deduplicated.
-- A re-sent change carries the same delivery_id; targets that append (BigQuery without
-- upsert) may hold it twice, so keep one row per key.
with source as (

    select * from {{ source('raw_feeds', 'feed_items') }}

),

typed as (

    select
        cast(delivery_id as {{ dbt.type_string() }}) as delivery_id,
        cast(monitor_id as {{ dbt.type_string() }}) as monitor_id,
        cast(feed_url as {{ dbt.type_string() }}) as feed_url,
        cast(item_id as {{ dbt.type_string() }}) as item_id,
        {{ feeddelta.key_hash(["monitor_id", "feed_url", "item_id"]) }} as item_key,
        cast(change_type as {{ dbt.type_string() }}) as change_type,
        {{ feeddelta.utc_timestamp('checked_at') }} as checked_at,
        cast(checked_at as date) as checked_on,  -- the loaded UTC value: the UTC day
        cast(fingerprint as {{ dbt.type_string() }}) as fingerprint,
        cast(id_source as {{ dbt.type_string() }}) as id_source,
        cast(final_url as {{ dbt.type_string() }}) as final_url,
        cast(feed_title as {{ dbt.type_string() }}) as feed_title,
        cast(feed_format as {{ dbt.type_string() }}) as feed_format,
        cast(url as {{ dbt.type_string() }}) as url,
        cast(title as {{ dbt.type_string() }}) as title,
        cast(summary as {{ dbt.type_string() }}) as summary,
        cast(content_text as {{ dbt.type_string() }}) as content_text,
        {{ feeddelta.utc_timestamp('published_at') }} as published_at,
        {{ feeddelta.utc_timestamp('updated_at') }} as updated_at,
        {{ feeddelta.json_value('authors') }} as authors_json,
        {{ feeddelta.json_value('tags') }} as tags_json,
        {{ feeddelta.json_value('enclosures') }} as enclosures_json,
        {{ feeddelta.json_value('issues') }} as issues_json,
        cast({{ feeddelta.json_array_length('issues') }} as {{ dbt.type_int() }}) as issue_count,
        cast(source_pointer as {{ dbt.type_string() }}) as source_pointer,
        cast(schema_version as {{ dbt.type_string() }}) as schema_version
    from source

),

deduplicated as (

    select
        *,
        row_number() over (partition by delivery_id order by checked_at desc) as row_rank
    from typed

)

select
    delivery_id, monitor_id, feed_url, item_id, item_key, change_type, checked_at, checked_on,
    fingerprint, id_source, final_url, feed_title, feed_format, url, title, summary,
    content_text, published_at, updated_at, authors_json, tags_json, enclosures_json,
    issues_json, issue_count, source_pointer, schema_version
from deduplicated
where row_rank = 1
