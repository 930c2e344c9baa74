-- One row per feed per check (monitor_id, feed_url, checked_at), typed and deduplicated.
with source as (

    select * from {{ source('raw_feeds', 'feed_health') }}

),

typed as (

    select
        {{ feeddelta.key_hash(["monitor_id", "feed_url", dbt.cast("checked_at", dbt.type_string())]) }} as check_id,
        cast(monitor_id as {{ dbt.type_string() }}) as monitor_id,
        cast(feed_url as {{ dbt.type_string() }}) as feed_url,
        {{ feeddelta.utc_timestamp('checked_at') }} as checked_at,
        cast(checked_at as date) as checked_on,  -- the loaded UTC value: the UTC day
        cast(status as {{ dbt.type_string() }}) as status,
        cast(http_status as {{ dbt.type_int() }}) as http_status,
        cast(error_code as {{ dbt.type_string() }}) as error_code,
        cast(error_message as {{ dbt.type_string() }}) as error_message,
        cast(final_url as {{ dbt.type_string() }}) as final_url,
        cast(feed_title as {{ dbt.type_string() }}) as feed_title,
        cast(feed_format as {{ dbt.type_string() }}) as feed_format,
        cast({{ feeddelta.json_field_text('item_counts', 'seen') }} as {{ dbt.type_int() }}) as items_seen,
        cast({{ feeddelta.json_field_text('item_counts', 'new') }} as {{ dbt.type_int() }}) as items_new,
        cast({{ feeddelta.json_field_text('item_counts', 'updated') }} as {{ dbt.type_int() }}) as items_updated,
        cast({{ feeddelta.json_field_text('item_counts', 'unchanged') }} as {{ dbt.type_int() }}) as items_unchanged,
        cast({{ feeddelta.json_field_text('item_counts', 'emitted') }} as {{ dbt.type_int() }}) as items_emitted,
        cast({{ feeddelta.json_field_text('item_counts', 'deferred') }} as {{ dbt.type_int() }}) as items_deferred,
        cast({{ feeddelta.json_field_text('item_counts', 'remembered') }} as {{ dbt.type_int() }}) as items_remembered,
        cast({{ feeddelta.json_field_text('item_counts', 'duplicates') }} as {{ dbt.type_int() }}) as items_duplicate,
        cast({{ feeddelta.json_field_text('conditional_request', 'etag_sent') }} as {{ dbt.type_boolean() }}) as is_etag_sent,
        cast({{ feeddelta.json_field_text('conditional_request', 'last_modified_sent') }} as {{ dbt.type_boolean() }}) as is_last_modified_sent,
        cast({{ feeddelta.json_field_text('conditional_request', 'not_modified') }} as {{ dbt.type_boolean() }}) as is_not_modified,
        cast(redirects as {{ dbt.type_int() }}) as redirects,
        cast(bytes_received as {{ dbt.type_bigint() }}) as bytes_received,
        cast(fetch_ms as {{ dbt.type_bigint() }}) as fetch_ms,
        cast(parse_ms as {{ dbt.type_bigint() }}) as parse_ms,
        cast(is_stale as {{ dbt.type_boolean() }}) as is_stale,
        {{ feeddelta.utc_timestamp('newest_item_at') }} as newest_item_at,
        cast(is_truncated as {{ dbt.type_boolean() }}) as is_truncated,
        cast(discovered_from as {{ dbt.type_string() }}) as discovered_from,
        {{ feeddelta.json_value('advertised_feeds') }} as advertised_feeds_json,
        {{ feeddelta.utc_timestamp('retry_after_at') }} as retry_after_at,
        {{ feeddelta.utc_timestamp('last_success_at') }} as last_success_at,
        cast(consecutive_failures as {{ dbt.type_int() }}) as consecutive_failures,
        {{ feeddelta.json_value('issues') }} as issues_json,
        cast({{ feeddelta.json_array_length('issues') }} as {{ dbt.type_int() }}) as issue_count,
        cast(schema_version as {{ dbt.type_string() }}) as schema_version
    from source

),

deduplicated as (

    select
        *,
        row_number() over (partition by check_id order by checked_at) as row_rank
    from typed

)

select
    check_id, monitor_id, feed_url, checked_at, checked_on, status, http_status, error_code,
    error_message, final_url, feed_title, feed_format, items_seen, items_new, items_updated,
    items_unchanged, items_emitted, items_deferred, items_remembered, items_duplicate, is_etag_sent,
    is_last_modified_sent, is_not_modified, redirects, bytes_received, fetch_ms, parse_ms,
    is_stale, newest_item_at, is_truncated, discovered_from, advertised_feeds_json,
    retry_after_at, last_success_at, consecutive_failures, issues_json, issue_count,
    schema_version
from deduplicated
where row_rank = 1
