//! The password strength floor (§4). The attack it resists is an offline guess by someone
//! who copied the data directory — the administrator included — so it asks for length,
//! which the person can reach with a phrase, rather than symbol rules. Pure.

/// Shortest password accepted, in characters.
pub const MIN_CHARS: usize = 12;
/// Longest accepted, in bytes: enough for any phrase, bounded so hashing stays cheap.
pub const MAX_BYTES: usize = 1024;

/// Passwords people pick first; refused whatever their length.
const COMMON: [&str; 16] = [
    "password1234",
    "123456789012",
    "qwertyuiop12",
    "iloveyou1234",
    "passwordpassword",
    "correcthorsebatterystaple",
    "letmeinletmein",
    "welcome12345",
    "administrator",
    "qwertyqwerty",
    "abcdefghijkl",
    "111111111111",
    "000000000000",
    "123456123456",
    "changemechangeme",
    "skaldskaldskald",
];

/// Why a password is refused, in words the UI shows as they are.
pub fn weakness(password: &str, name: &str) -> Option<String> {
    let chars = password.chars().count();
    if password.len() > MAX_BYTES {
        return Some(format!("Use at most {MAX_BYTES} bytes."));
    }
    if chars < MIN_CHARS {
        return Some(format!(
            "Use at least {MIN_CHARS} characters; a phrase of three or four unrelated words is easy to remember. \
             Whoever copies this computer's files could try guesses offline, so length matters."
        ));
    }
    let lower = password.to_lowercase();
    let distinct: std::collections::HashSet<char> = lower.chars().collect();
    if distinct.len() < 5 {
        return Some("Use more different characters; repeating a few is easy to guess.".to_owned());
    }
    let squashed: String = lower.chars().filter(|c| c.is_alphanumeric()).collect();
    if COMMON.contains(&squashed.as_str()) {
        return Some("That password is among the first ones guessed; choose another.".to_owned());
    }
    let name = name.trim().to_lowercase();
    if name.chars().count() >= 3 && lower.contains(&name) {
        return Some("Leave your name out of your password.".to_owned());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_phrase_passes() {
        assert_eq!(weakness("otter lantern quietly", "Ada"), None);
    }

    #[test]
    fn short_repetitive_common_or_self_naming_passwords_are_refused_with_a_reason() {
        assert!(weakness("short", "Ada").unwrap().contains("at least 12"));
        assert!(weakness("aaaaaaaaaaaaaaaa", "Ada").unwrap().contains("different characters"));
        assert!(weakness("Password-1234", "Ada").unwrap().contains("first ones guessed"));
        assert!(weakness("margaret is here now", "Margaret").unwrap().contains("name"));
    }
}
