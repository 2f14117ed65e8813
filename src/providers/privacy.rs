//! Privacy tiers (§16): whether a provider keeps a person's words on this machine or the
//! home network. A provider is `local` when it is the built-in model, a loopback address,
//! or a private-network address the administrator marked trusted; everything else —
//! public addresses, and any host name but `localhost`, whose address could change under
//! us — is `remote`. Pure.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use serde::Serialize;

use crate::store::providers::ProviderKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "Privacy")]
pub enum Tier {
    Local,
    Remote,
}

/// The tier of a provider from its kind, its base URL and the administrator's mark.
pub fn classify(kind: ProviderKind, base_url: &str, trusted_lan: bool) -> Tier {
    if kind == ProviderKind::Local {
        return Tier::Local;
    }
    let Ok(url) = reqwest::Url::parse(base_url) else { return Tier::Remote };
    let ip = match url.host() {
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip),
        Some(url::Host::Domain(name)) if name.eq_ignore_ascii_case("localhost") => return Tier::Local,
        _ => return Tier::Remote,
    };
    let ip = ip.to_canonical();
    if ip.is_loopback() || (trusted_lan && is_private(ip)) { Tier::Local } else { Tier::Remote }
}

/// Addresses that only route inside a home or office network.
fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_private() || v4.is_link_local() || in_shared_space(v4),
        IpAddr::V6(v6) => is_unique_local(v6) || is_unicast_link_local(v6),
    }
}

/// 100.64.0.0/10, the carrier-grade NAT range some home networks (and VPNs) use.
fn in_shared_space(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    a == 100 && (64..128).contains(&b)
}

fn is_unique_local(ip: Ipv6Addr) -> bool {
    (ip.segments()[0] & 0xfe00) == 0xfc00
}

fn is_unicast_link_local(ip: Ipv6Addr) -> bool {
    (ip.segments()[0] & 0xffc0) == 0xfe80
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::providers::ProviderKind::Openai;
    use Tier::{Local, Remote};

    #[test]
    fn providers_are_classified_by_kind_address_and_trust() {
        let cases = [
            // (kind, base URL, marked trusted, tier)
            (ProviderKind::Local, "", false, Local),
            (Openai, "http://127.0.0.1:11434/v1", false, Local),
            (Openai, "http://127.8.9.10:1234/v1", false, Local),
            (Openai, "http://localhost:8080/v1", false, Local),
            (Openai, "http://LOCALHOST:8080/v1", false, Local),
            (Openai, "http://[::1]:1234/v1", false, Local),
            (Openai, "http://[::ffff:127.0.0.1]:1234/v1", false, Local),
            (Openai, "http://192.168.1.20:11434/v1", false, Remote),
            (Openai, "http://192.168.1.20:11434/v1", true, Local),
            (Openai, "http://10.0.0.5/v1", true, Local),
            (Openai, "http://172.16.0.5/v1", true, Local),
            (Openai, "http://172.32.0.5/v1", true, Remote),
            (Openai, "http://100.100.1.1/v1", true, Local),
            (Openai, "http://169.254.3.4/v1", true, Local),
            (Openai, "http://[fd12:3456::1]/v1", true, Local),
            (Openai, "http://[fe80::1]/v1", true, Local),
            (Openai, "http://[2001:db8::1]/v1", true, Remote),
            (Openai, "https://api.openai.com/v1", false, Remote),
            (Openai, "https://api.openai.com/v1", true, Remote),
            (Openai, "http://8.8.8.8/v1", true, Remote),
            (Openai, "http://nas.local:11434/v1", true, Remote),
            (Openai, "http://localhost.evil.example/v1", false, Remote),
            (Openai, "http://127.0.0.1.nip.io/v1", false, Remote),
            (Openai, "not a url", true, Remote),
        ];
        for (kind, url, trusted, tier) in cases {
            assert_eq!(classify(kind, url, trusted), tier, "{kind} {url} trusted={trusted}");
        }
    }
}
