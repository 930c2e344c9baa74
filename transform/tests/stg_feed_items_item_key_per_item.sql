-- item_key identifies exactly one (monitor_id, feed_url, item_id): two items with one key
-- would show as versions of each other, one item with two keys as two items.
select item_key, 'item_key shared by several items' as problem
from {{ ref('stg_feed_items') }}
group by item_key
having count(distinct monitor_id) > 1
    or count(distinct feed_url) > 1
    or count(distinct item_id) > 1

union all

select min(item_key), 'item with several item_keys'
from {{ ref('stg_feed_items') }}
group by monitor_id, feed_url, item_id
having count(distinct item_key) > 1
