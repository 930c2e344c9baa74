{{ config(severity='warn') }}
-- feed_health_daily's new_items and updated_items (from the checks' item_counts) against the
-- versions of that day in feed_item_versions. They differ, and this warns, after a change is
-- delivered again under the same delivery_id: a re-sent run, a --full-refresh, an item
-- re-added after the state forgot it, the same edit made again (see the columns'
-- descriptions). Otherwise it is an error in the models or a lost row.
with versions as (

    select
        monitor_id,
        feed_url,
        checked_on,
        sum(case when change_type = 'new' then 1 else 0 end) as new_versions,
        sum(case when change_type = 'updated' then 1 else 0 end) as updated_versions
    from {{ ref('feed_item_versions') }}
    group by monitor_id, feed_url, checked_on

),

daily as (

    select monitor_id, feed_url, checked_on, new_items, updated_items
    from {{ ref('feed_health_daily') }}

)

select
    coalesce(daily.monitor_id, versions.monitor_id) as monitor_id,
    coalesce(daily.feed_url, versions.feed_url) as feed_url,
    coalesce(daily.checked_on, versions.checked_on) as checked_on,
    daily.new_items,
    versions.new_versions,
    daily.updated_items,
    versions.updated_versions
from daily
full outer join versions
    on versions.monitor_id = daily.monitor_id
    and versions.feed_url = daily.feed_url
    and versions.checked_on = daily.checked_on
where coalesce(daily.new_items, 0) <> coalesce(versions.new_versions, 0)
    or coalesce(daily.updated_items, 0) <> coalesce(versions.updated_versions, 0)
