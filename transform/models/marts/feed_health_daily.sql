-- Per monitor, feed and UTC day: how the checks went, what they delivered and cost.
with checks as (

    select
        *,
        -- The changes this check delivered, from its item_counts: feed_health rows are
        -- never rewritten, while a feed_items row moves to the check that delivers its
        -- change again (a --full-refresh, a version that comes back), so counting those
        -- rows would take the change from its day. emitted = new + updated delivered, and
        -- an update is deferred only after every new change, so the updates delivered are
        -- updated - deferred (at least 0).
        greatest(coalesce(items_updated, 0) - coalesce(items_deferred, 0), 0) as updated_delivered
    from {{ ref('stg_feed_health') }}

),

daily_checks as (

    select
        monitor_id,
        feed_url,
        checked_on,
        cast(count(*) as {{ dbt.type_bigint() }}) as checks,
        cast(sum(case when status = 'ok' then 1 else 0 end) as {{ dbt.type_bigint() }}) as ok_checks,
        cast(sum(case when status = 'not_modified' then 1 else 0 end) as {{ dbt.type_bigint() }}) as not_modified_checks,
        cast(sum(case when status = 'error' then 1 else 0 end) as {{ dbt.type_bigint() }}) as error_checks,
        cast(sum(case when status = 'skipped' then 1 else 0 end) as {{ dbt.type_bigint() }}) as skipped_checks,
        -- Null when no check that day knew (no dated item, or rows from before error
        -- and skipped rows carried the state's staleness): unknown is not "fresh".
        max(case when is_stale then 1 when not is_stale then 0 end) = 1 as is_stale,
        max(newest_item_at) as newest_item_at,
        cast(sum(coalesce(items_emitted, 0) - updated_delivered) as {{ dbt.type_bigint() }}) as new_items,
        cast(sum(updated_delivered) as {{ dbt.type_bigint() }}) as updated_items,
        cast(sum(items_deferred) as {{ dbt.type_bigint() }}) as items_deferred,
        cast(sum(bytes_received) as {{ dbt.type_bigint() }}) as bytes_received,
        cast(sum(fetch_ms) as {{ dbt.type_bigint() }}) as fetch_ms,
        cast(sum(parse_ms) as {{ dbt.type_bigint() }}) as parse_ms,
        min(checked_at) as first_checked_at,
        max(checked_at) as last_checked_at
    from checks
    group by monitor_id, feed_url, checked_on

),

last_check as (

    select
        monitor_id,
        feed_url,
        checked_on,
        status as last_status,
        error_code as last_error_code,
        feed_title,
        last_success_at,
        consecutive_failures,
        row_number() over (
            partition by monitor_id, feed_url, checked_on order by checked_at desc
        ) as recency
    from checks

),

errors as (

    select
        monitor_id,
        feed_url,
        checked_on,
        {{ feeddelta.sorted_list(dbt.concat(["error_code", "'='", dbt.cast("checks", dbt.type_string())])) }} as error_codes
    from {{ ref('feed_errors_daily') }}
    group by monitor_id, feed_url, checked_on

)

select
    {{ feeddelta.key_hash(["daily_checks.monitor_id", "daily_checks.feed_url", dbt.cast("daily_checks.checked_on", dbt.type_string())]) }} as feed_day_id,
    daily_checks.monitor_id,
    daily_checks.feed_url,
    daily_checks.checked_on,
    last_check.feed_title,
    daily_checks.checks,
    daily_checks.ok_checks,
    daily_checks.not_modified_checks,
    daily_checks.error_checks,
    daily_checks.skipped_checks,
    errors.error_codes,
    last_check.last_status,
    last_check.last_error_code,
    last_check.last_success_at,
    last_check.consecutive_failures,
    daily_checks.new_items,
    daily_checks.updated_items,
    daily_checks.items_deferred,
    daily_checks.is_stale,
    daily_checks.newest_item_at,
    daily_checks.bytes_received,
    daily_checks.fetch_ms,
    daily_checks.parse_ms,
    daily_checks.first_checked_at,
    daily_checks.last_checked_at
from daily_checks
inner join last_check
    on last_check.monitor_id = daily_checks.monitor_id
    and last_check.feed_url = daily_checks.feed_url
    and last_check.checked_on = daily_checks.checked_on
    and last_check.recency = 1
left join errors
    on errors.monitor_id = daily_checks.monitor_id
    and errors.feed_url = daily_checks.feed_url
    and errors.checked_on = daily_checks.checked_on
