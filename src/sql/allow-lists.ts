// The functions and types that model-written SQL may use. An allow-list, not a deny-list: whatever
// PostgreSQL adds later (or an extension installs) stays out until someone decides it is safe.
// Nothing here sleeps, reads files, reaches another server or database object, changes a setting,
// takes a lock, runs SQL from a string (query_to_xml), or touches large objects or sequences, and
// nothing that makes a value as large as a number says (repeat, lpad, rpad, format's widths,
// generate_series): results are bounded by statement_timeout and the executor's size limit besides.

const names = (text: string): ReadonlySet<string> => new Set(text.split(/\s+/).filter(Boolean));

export const SAFE_FUNCTIONS = names(`
  count sum avg min max bool_and bool_or every string_agg array_agg jsonb_agg jsonb_object_agg json_agg
  stddev variance percentile_cont percentile_disc mode
  row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value
  lower upper initcap length char_length character_length octet_length btrim ltrim rtrim trim
  substring substr left right replace translate concat concat_ws position strpos split_part starts_with
  reverse regexp_replace regexp_match regexp_matches regexp_like regexp_count regexp_substr
  regexp_split_to_array to_char to_number to_date to_timestamp quote_literal quote_ident overlay
  normalize unaccent md5
  abs round ceil ceiling floor trunc mod div sign sqrt power greatest least random
  now date_trunc date_part extract age make_date make_interval make_timestamp make_timestamptz
  timezone justify_days justify_hours justify_interval isfinite date_bin
  jsonb_array_length jsonb_array_elements jsonb_array_elements_text jsonb_typeof jsonb_build_object
  jsonb_build_array jsonb_object_keys jsonb_extract_path jsonb_extract_path_text jsonb_set jsonb_set_lax
  jsonb_insert jsonb_strip_nulls jsonb_pretty to_jsonb jsonb_each jsonb_each_text jsonb_path_exists
  jsonb_path_match jsonb_path_query jsonb_path_query_array jsonb_path_query_first json_build_object
  json_build_array to_json json_array_length json_array_elements json_array_elements_text json_typeof
  unnest array_length array_to_string array_position array_positions array_append array_prepend
  array_cat array_remove array_replace cardinality string_to_array
  coalesce nullif num_nulls num_nonnulls
`);

/** Types a cast may name (the last part of the name; the schema may only be pg_catalog). */
export const SAFE_TYPES = names(`
  text varchar bpchar char name
  int2 int4 int8 int integer smallint bigint numeric decimal float4 float8 real
  bool boolean json jsonb uuid date time timetz timestamp timestamptz interval
`);
