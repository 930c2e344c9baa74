-- The latest version of an item is numbered as many as the versions delivered: a version
-- counted but not numbered (or numbered twice) fails here.
select item_key, version_number, version_count
from {{ ref('feed_items_current') }}
where version_number <> version_count
