-- The value rules of docs/queries.md ("Values") as DuckDB macros over the
-- VARCHAR fields that read_csv gives. NULL is a missing value.

-- boolean: true, false, 1 or 0, in any letter case.
CREATE MACRO wl_bool(v) AS
    CASE lower(v) WHEN 'true' THEN true WHEN '1' THEN true WHEN 'false' THEN false WHEN '0' THEN false END;

-- number: exactly -?[0-9]+(\.[0-9]+)?, kept as its text ...
CREATE MACRO wl_number(v) AS
    CASE WHEN regexp_full_match(v, '-?[0-9]+(\.[0-9]+)?') THEN v END;

-- ... and as an exact DECIMAL(38,18) when it has at most 19 integer and 18
-- fractional digits, leading and trailing zeros aside (10 times it still
-- fits); NULL for a wider number, which wl_cmp compares.
CREATE MACRO wl_decimal(v) AS
    CASE WHEN regexp_full_match(v, '-?0*[0-9]{1,19}(\.[0-9]{1,18}0*)?') THEN CAST(v AS DECIMAL(38, 18)) END;

-- A number (its DECIMAL d and its text t) greater than the integer k,
-- exactly; false when it is missing.
CREATE MACRO wl_gt(d, t, k) AS
    CASE WHEN d IS NOT NULL THEN d > k
         WHEN t IS NOT NULL THEN wl_cmp(1, t, 1, CAST(k AS VARCHAR)) > 0
         ELSE false END;

-- duration: H:MM:SS or HH:MM:SS, optionally after "N day, " or "N days, ",
-- in seconds; minutes and seconds are not range-checked. A day count of
-- more than 12 digits saturates (any such duration is far over any bound
-- the queries use).
CREATE MACRO wl_clock(v) AS
    regexp_extract(v, '^(?:([0-9]+) days?, )?([0-9]{1,2}):([0-9]{2}):([0-9]{2})$', ['d', 'h', 'm', 's']);
CREATE MACRO wl_seconds(x) AS
    CASE WHEN length(ltrim(x['d'], '0')) > 12 THEN 9223372036854775807
         ELSE coalesce(CAST(nullif(x['d'], '') AS BIGINT), 0) * 86400
              + CAST(x['h'] AS BIGINT) * 3600 + CAST(x['m'] AS BIGINT) * 60 + CAST(x['s'] AS BIGINT) END;
CREATE MACRO wl_duration(v) AS
    CASE WHEN regexp_full_match(v, '([0-9]+ days?, )?[0-9]{1,2}:[0-9]{2}:[0-9]{2}') THEN wl_seconds(wl_clock(v)) END;
