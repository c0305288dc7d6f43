-- The value rules of docs/queries.md ("Values") as DuckDB macros over the
-- VARCHAR fields that read_csv gives. NULL is a missing value.

-- boolean: true, false, 1 or 0, in any letter case.
CREATE MACRO wl_bool(v) AS
    CASE lower(v) WHEN 'true' THEN true WHEN '1' THEN true WHEN 'false' THEN false WHEN '0' THEN false END;

-- number: exactly -?[0-9]+(\.[0-9]+)?, kept as its text ...
CREATE MACRO wl_number(v) AS
    CASE WHEN regexp_full_match(v, '-?[0-9]+(\.[0-9]+)?') THEN v END;

-- ... and as an exact DECIMAL(18,6) when it has at most 11 integer and 6
-- fractional digits, leading and trailing zeros aside (most ratings; a
-- mean such as 1523.3333333333333 is wider; 10 times it still fits).
-- NULL for a wider number, which
-- wl_text_gt and wl_cmp compare. (A DECIMAL wide enough for any rating,
-- DECIMAL(38,18), is exact too, but DuckDB casts text to it a hundred
-- times slower.)
CREATE MACRO wl_decimal(v) AS
    CASE WHEN regexp_full_match(v, '-?0*[0-9]{1,11}(\.[0-9]{1,6}0*)?') THEN CAST(v AS DECIMAL(18, 6)) END;

-- A number's text t greater than k, the text of a positive integer without
-- leading zeros: exact for any length, compared digit by digit.
CREATE MACRO wl_int_digits(t) AS
    ltrim(split_part(ltrim(t, '-'), '.', 1), '0');
CREATE MACRO wl_text_gt(t, k) AS
    NOT starts_with(t, '-') AND (
        length(wl_int_digits(t)) > length(k)
        OR (length(wl_int_digits(t)) = length(k)
            AND (wl_int_digits(t) > k OR (wl_int_digits(t) = k AND regexp_matches(t, '\.[0-9]*[1-9]')))));

-- A number (its DECIMAL d and its text t) greater than k, a positive
-- integer, exactly; false when it is missing.
CREATE MACRO wl_gt(d, t, k) AS
    CASE WHEN d IS NOT NULL THEN d > k
         WHEN t IS NOT NULL THEN wl_text_gt(t, CAST(k AS VARCHAR))
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

-- The same, exact for any day count DuckDB's DECIMAL holds (33 digits; a
-- wider one is an overflow error): the SQL engine's differential test
-- (sqldiff_test.go) compares it with the engine's exact seconds, where
-- wl_duration's saturation would differ.
CREATE MACRO wl_duration_exact(v) AS
    CASE WHEN regexp_full_match(v, '([0-9]+ days?, )?[0-9]{1,2}:[0-9]{2}:[0-9]{2}') THEN
        coalesce(CAST(nullif(wl_clock(v)['d'], '') AS DECIMAL(38, 0)), 0) * 86400
        + CAST(wl_clock(v)['h'] AS BIGINT) * 3600 + CAST(wl_clock(v)['m'] AS BIGINT) * 60 + CAST(wl_clock(v)['s'] AS BIGINT) END;
