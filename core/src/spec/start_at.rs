//! A synchronized start (`--start-at`, `start_at=` in the bindings): the instant at which
//! the first phase sends its first request, so that several hosts start together.

use crate::{Error, Result};

/// How late a start may be before the run refuses it (seconds): later, the hosts that were
/// on time would already have run a second alone.
pub const START_LATE_LIMIT_S: f64 = 1.0;

/// How far ahead a start may be (seconds): further, it is a mistake (milliseconds given for
/// seconds) rather than a plan.
pub const START_AHEAD_LIMIT_S: f64 = 86_400.0;

/// Seconds since the UNIX epoch, now.
pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// An error when the start instant `at` passed more than [`START_LATE_LIMIT_S`] before `now`
/// (`when` says at which point of the run, e.g. "by the time the connections were open").
pub fn check_not_late(at: f64, now: f64, when: &str) -> Result<()> {
    let late = now - at;
    if late <= START_LATE_LIMIT_S {
        return Ok(());
    }
    Err(Error::spec(
        "start_at",
        format!(
            "{at}: that instant passed {late:.3} s ago{when} (at most {START_LATE_LIMIT_S} s \
             late is allowed): give a later one"
        ),
    ))
}

/// A start instant from its text: UNIX seconds (`1764100000`, `1764100000.5`) or an RFC 3339
/// time with its offset (`2026-11-25T20:00:00Z`, `2026-11-25T21:00:00.250+01:00`), as UNIX
/// seconds.
pub fn parse_start_at(text: &str) -> Result<f64> {
    let text = text.trim();
    let bad = |why: &str| {
        Error::spec(
            "start_at",
            format!(
                "`{text}`: {why}; give UNIX seconds (e.g. 1764100000) or an RFC 3339 time \
                 with its offset (e.g. 2026-11-25T20:00:00Z)"
            ),
        )
    };
    if let Ok(secs) = text.parse::<f64>() {
        return match secs.is_finite() && secs > 0.0 {
            true => Ok(secs),
            false => Err(bad("not a time after 1970")),
        };
    }
    rfc3339(text).ok_or_else(|| bad("not a time"))
}

/// `YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)` (a space or `t` for `T`, `z` for `Z`).
fn rfc3339(text: &str) -> Option<f64> {
    let b = text.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let num = |from: usize, to: usize| -> Option<i64> {
        let s = text.get(from..to)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    let (year, month, day) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (hour, minute, second) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
    let days_in_month = match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        1..=12 => 31,
        _ => return None,
    };
    if !(1..=days_in_month).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut rest = &text[19..];
    let mut fraction = 0.0;
    if let Some(digits) = rest.strip_prefix('.') {
        let n = digits.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        fraction = format!("0.{}", &digits[..n]).parse().ok()?;
        rest = &digits[n..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6
            && matches!(rest.as_bytes()[0], b'+' | b'-')
            && rest.as_bytes()[3] == b':' =>
        {
            let (h, m) = (num_of(rest.get(1..3)?)?, num_of(rest.get(4..6)?)?);
            if h > 23 || m > 59 {
                return None;
            }
            let sign = if rest.starts_with('-') { -1 } else { 1 };
            sign * (h * 3600 + m * 60)
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset;
    Some(secs as f64 + fraction)
}

fn num_of(s: &str) -> Option<i64> {
    s.bytes()
        .all(|c| c.is_ascii_digit())
        .then(|| s.parse().ok())?
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian date (year, month, day) of a count of days since 1970-01-01
/// (Howard Hinnant's days-to-civil, the inverse of [`days_from_civil`]).
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m as u32, d as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_from_days_inverts_days_from_civil() {
        for (y, m, d) in [(1970, 1, 1), (2000, 2, 29), (2026, 11, 29), (1969, 12, 31)] {
            assert_eq!(
                civil_from_days(days_from_civil(y, m, d)),
                (y, m as u32, d as u32)
            );
        }
    }

    #[test]
    fn unix_seconds_and_rfc3339_times_parse_to_the_same_instant() {
        assert_eq!(parse_start_at("1764100800").unwrap(), 1_764_100_800.0);
        assert_eq!(parse_start_at(" 1764100800.25 ").unwrap(), 1_764_100_800.25);
        // 2025-11-25T20:00:00Z is 1764100800.
        assert_eq!(
            parse_start_at("2025-11-25T20:00:00Z").unwrap(),
            1_764_100_800.0
        );
        assert_eq!(
            parse_start_at("2025-11-25T21:00:00.250+01:00").unwrap(),
            1_764_100_800.25
        );
        assert_eq!(
            parse_start_at("2025-11-25 19:30:00-00:30").unwrap(),
            1_764_100_800.0
        );
        assert_eq!(parse_start_at("1970-01-01T00:00:01Z").unwrap(), 1.0);
        assert_eq!(
            parse_start_at("2024-02-29T00:00:00Z").unwrap(),
            1_709_164_800.0
        );
        for bad in [
            "",
            "soon",
            "-5",
            "inf",
            "2025-11-25T20:00:00",
            "2025-02-29T00:00:00Z",
            "2025-13-01T00:00:00Z",
            "2025-11-25T24:00:00Z",
            "2025-11-25T20:00:00.Z",
            "2025-11-25T20:00:00+1:00",
            "2025-11-25T20:00:00\u{e9}1:00",
            "2025-11-25T20:00:00+\u{e9}:00",
            "\u{e9}025-11-25T20:00:00Z",
        ] {
            let e = parse_start_at(bad).unwrap_err().to_string();
            assert!(
                e.contains("start_at") && e.contains("RFC 3339"),
                "{bad}: {e}"
            );
        }
    }
}
