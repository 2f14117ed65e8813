//! The password strength floor (§4). The attack it resists is an offline guess by someone
//! who copied the data directory — the administrator included — so it asks for length,
//! which the person can reach with a phrase, rather than symbol rules. Pure.

/// The rules, one file for the server and the page (`web/src/state/password-rules.json`),
/// so the page's meter never calls green what the server refuses.
#[derive(serde::Deserialize)]
struct Rules {
    /// Shortest password accepted, in characters.
    min_chars: usize,
    /// Longest accepted, in bytes: enough for any phrase, bounded so hashing stays cheap.
    max_bytes: usize,
    /// Fewest different characters (case folded).
    min_distinct: usize,
    /// A name this long or longer may not appear in the password.
    name_min_chars: usize,
    /// Passwords people pick first, lowercased and with only letters and digits kept;
    /// refused whatever their length.
    common: Vec<String>,
}

fn rules() -> &'static Rules {
    static RULES: std::sync::LazyLock<Rules> = std::sync::LazyLock::new(|| {
        serde_json::from_str(include_str!("../../web/src/state/password-rules.json"))
            .expect("the password rules are valid JSON")
    });
    &RULES
}

/// Why a password is refused, in words the UI shows as they are.
pub fn weakness(password: &str, name: &str) -> Option<String> {
    let rules = rules();
    let chars = password.chars().count();
    if password.len() > rules.max_bytes {
        return Some(format!("Use at most {} bytes.", rules.max_bytes));
    }
    if chars < rules.min_chars {
        return Some(format!(
            "Use at least {} characters; a phrase of three or four unrelated words is easy to remember. \
             Whoever copies this computer's files could try guesses offline, so length matters.",
            rules.min_chars
        ));
    }
    let lower = password.to_lowercase();
    let distinct: std::collections::HashSet<char> = lower.chars().collect();
    if distinct.len() < rules.min_distinct {
        return Some("Use more different characters; repeating a few is easy to guess.".to_owned());
    }
    let squashed: String = lower.chars().filter(|c| c.is_alphanumeric()).collect();
    if rules.common.contains(&squashed) {
        return Some("That password is among the first ones guessed; choose another.".to_owned());
    }
    let name = name.trim().to_lowercase();
    if name.chars().count() >= rules.name_min_chars && lower.contains(&name) {
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

    #[test]
    fn every_common_password_is_written_as_it_is_compared() {
        for common in &rules().common {
            let squashed: String = common.to_lowercase().chars().filter(|c| c.is_alphanumeric()).collect();
            assert_eq!(&squashed, common, "lowercase letters and digits only, or it never matches");
            assert!(common.chars().count() >= rules().min_chars, "{common} is refused for its length already");
        }
    }
}
