-- Every item has exactly one version without a previous one, and it is version 1.
select
    item_key,
    sum(case when has_previous_version then 0 else 1 end) as first_versions,
    min(case when has_previous_version then null else version_number end) as first_version_number
from {{ ref('feed_item_versions') }}
group by item_key
having sum(case when has_previous_version then 0 else 1 end) <> 1
    or min(case when has_previous_version then null else version_number end) <> 1
