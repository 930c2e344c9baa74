-- Failed or skipped checks per monitor, feed, day and error code.
select
    {{ dbt.hash(dbt.concat(["monitor_id", "'|'", "feed_url", "'|'", dbt.cast("checked_on", dbt.type_string()), "'|'", "error_code"])) }} as feed_error_day_id,
    monitor_id,
    feed_url,
    checked_on,
    error_code,
    cast(count(*) as {{ dbt.type_bigint() }}) as checks,
    max(checked_at) as last_checked_at,
    max(http_status) as last_http_status
from {{ ref('stg_feed_health') }}
where error_code is not null
group by monitor_id, feed_url, checked_on, error_code
