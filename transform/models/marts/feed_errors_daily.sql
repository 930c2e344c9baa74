-- Failed or skipped checks per monitor, feed, day and error code.
with failed as (

    select
        monitor_id,
        feed_url,
        checked_on,
        error_code,
        checked_at,
        http_status,
        row_number() over (
            partition by monitor_id, feed_url, checked_on, error_code
            order by checked_at desc
        ) as recency
    from {{ ref('stg_feed_health') }}
    where error_code is not null

),

daily as (

    select
        monitor_id,
        feed_url,
        checked_on,
        error_code,
        cast(count(*) as {{ dbt.type_bigint() }}) as checks,
        max(checked_at) as last_checked_at
    from failed
    group by monitor_id, feed_url, checked_on, error_code

)

select
    {{ feeddelta.key_hash(["daily.monitor_id", "daily.feed_url", dbt.cast("daily.checked_on", dbt.type_string()), "daily.error_code"]) }} as feed_error_day_id,
    daily.monitor_id,
    daily.feed_url,
    daily.checked_on,
    daily.error_code,
    daily.checks,
    daily.last_checked_at,
    -- the status of the day's last such check (null when it got no response)
    failed.http_status as last_http_status
from daily
inner join failed
    on failed.monitor_id = daily.monitor_id
    and failed.feed_url = daily.feed_url
    and failed.checked_on = daily.checked_on
    and failed.error_code = daily.error_code
    and failed.recency = 1
