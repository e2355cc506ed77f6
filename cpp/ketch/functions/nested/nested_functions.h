#pragma once

#include <arrow/status.h>

namespace ketch::nested {

/// Registers the list kernels (list_get, list_slice, list_chunk, list_sort, list_distinct,
/// list_value_counts, list_contains, list_count), the per-list aggregates (list_sum, list_mean,
/// list_min, list_max, list_bool_and, list_bool_or) and struct_field_get / map_get. Each takes a list
/// (list, large_list, fixed_size_list; map for map_get) as its first argument, checks its argument
/// types at plan time (TypeError naming the function, the expression and its type) and treats a null
/// row as null.
arrow::Status RegisterNestedFunctions();

arrow::Status RegisterListFunctions();
arrow::Status RegisterListAggregateFunctions();
arrow::Status RegisterStructMapFunctions();
/// list_append(list, item), to_list(items...), list_flatten(list of lists), map_keys(map).
arrow::Status RegisterListBuildFunctions();
/// list_map(list, body) and list_filter(list, predicate): bodies over element() (IsLambdaCall).
arrow::Status RegisterListLambdaFunctions();

}  // namespace ketch::nested
