//! Where Skald may connect on its own initiative — web_fetch's pages, model downloads:
//! public internet addresses only, never this computer or the networks around it, so an
//! address a model, a page or a redirect chose cannot turn Skald against them. Resolving
//! and judging live here once; each caller words its own refusal.
//!
//! Never here: HTTP, or any allow-list; callers that may reach further (tests) decide so
//! themselves.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use url::Host;

/// Every address `host` leads to on `port`: an IP literal is itself, a name is looked up.
/// A connection must then go to exactly these, or a name could resolve to a public
/// address for the check and a private one for the connection.
pub async fn resolve(host: &Host<&str>, port: u16) -> std::io::Result<Vec<SocketAddr>> {
    let addrs: Vec<SocketAddr> = match host {
        Host::Ipv4(ip) => vec![SocketAddr::new((*ip).into(), port)],
        Host::Ipv6(ip) => vec![SocketAddr::new((*ip).into(), port)],
        Host::Domain(domain) => tokio::net::lookup_host((*domain, port)).await?.collect(),
    };
    if addrs.is_empty() {
        return Err(std::io::Error::other("it has no address"));
    }
    Ok(addrs)
}

/// The first of `addrs` that is not public, with what it is. Every address is judged,
/// because a connection may use any of them.
pub fn first_non_public(addrs: &[SocketAddr]) -> Option<(IpAddr, &'static str)> {
    addrs.iter().map(SocketAddr::ip).find_map(|ip| non_public_kind(ip).map(|kind| (ip, kind)))
}

/// Whether an address is on the public internet, and so one Skald may connect to.
pub fn is_public(ip: IpAddr) -> bool {
    non_public_kind(ip).is_none()
}

/// What a non-public address is, in words for a refusal; `None` for a public one.
pub fn non_public_kind(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(ip) => non_public_v4(ip),
        IpAddr::V6(ip) => non_public_v6(ip),
    }
}

fn non_public_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        _ if ip.is_broadcast() => "the broadcast address",
        _ if ip.is_unspecified() => "the unspecified address",
        (0, ..) => "a \"this network\" address",
        (127, ..) => "a loopback address",
        (10, ..) | (172, 16..=31, _) | (192, 168, _) => "a private-network address",
        (169, 254, _) => "a link-local address",
        (100, 64..=127, _) => "a carrier-grade NAT address",
        (192, 0, 0) => "an IETF protocol address",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "a documentation address",
        (198, 18..=19, _) => "a benchmarking address",
        (224..=239, ..) => "a multicast address",
        (240..=255, ..) => "a reserved address",
        _ => return None,
    })
}

fn non_public_v6(ip: Ipv6Addr) -> Option<&'static str> {
    if ip.is_unspecified() {
        return Some("the unspecified address");
    }
    if ip.is_loopback() {
        return Some("a loopback address");
    }
    // IPv4-mapped (::ffff:a.b.c.d) and the old IPv4-compatible (::a.b.c.d) forms reach the
    // IPv4 host, and so do NAT64 (64:ff9b::/96) and 6to4 (2002::/16) through a gateway: each
    // is judged by the IPv4 address inside it.
    if let Some(v4) = ip.to_ipv4() {
        return non_public_v4(v4);
    }
    let s = ip.segments();
    let embedded = |high: u16, low: u16| Ipv4Addr::from((u32::from(high) << 16) | u32::from(low));
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return non_public_v4(embedded(s[6], s[7]));
    }
    if s[0] == 0x2002 {
        return non_public_v4(embedded(s[1], s[2]));
    }
    Some(match s {
        [0xfe80..=0xfebf, ..] => "a link-local address",
        [0xfec0..=0xfeff, ..] => "a site-local address",
        [0xfc00..=0xfdff, ..] => "a unique-local address",
        [0xff00..=0xffff, ..] => "a multicast address",
        [0x2001, 0x0db8, ..] | [0x3fff, 0x0000..=0x0fff, ..] => "a documentation address",
        [0x2001, 0x0002, 0x0000, ..] => "a benchmarking address",
        // Teredo hides the IPv4 host it leads to, so it cannot be judged.
        [0x2001, 0x0000, ..] => "a Teredo tunnel address",
        [0x2000..=0x3fff, ..] => return None,
        _ => "outside the public IPv6 range",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_public_addresses_are_reachable() {
        let cases = [
            ("93.184.216.34", true, "an ordinary IPv4 address is public"),
            ("1.1.1.1", true, "a public resolver is public"),
            ("2606:4700:4700::1111", true, "an ordinary IPv6 address is public"),
            ("127.0.0.1", false, "loopback is this computer"),
            ("127.200.0.9", false, "all of 127/8 is loopback"),
            ("::1", false, "IPv6 loopback is this computer"),
            ("10.0.0.1", false, "10/8 is a private network"),
            ("172.16.0.1", false, "172.16/12 is a private network"),
            ("172.31.255.255", false, "172.16/12 ends at 172.31"),
            ("172.32.0.1", true, "172.32 is past the private range"),
            ("192.168.1.1", false, "192.168/16 is a private network"),
            ("169.254.169.254", false, "link-local holds cloud metadata services"),
            ("fe80::1", false, "IPv6 link-local is the local segment"),
            ("0.0.0.0", false, "the unspecified address means this host"),
            ("::", false, "the IPv6 unspecified address means this host"),
            ("0.1.2.3", false, "0/8 is this network"),
            ("255.255.255.255", false, "broadcast reaches the whole segment"),
            ("224.0.0.1", false, "multicast is not a web server"),
            ("ff02::1", false, "IPv6 multicast is not a web server"),
            ("100.64.0.1", false, "100.64/10 is carrier-grade NAT"),
            ("100.127.255.255", false, "carrier-grade NAT ends at 100.127"),
            ("100.128.0.1", true, "100.128 is past carrier-grade NAT"),
            ("192.0.2.1", false, "TEST-NET-1 is for documentation"),
            ("198.51.100.1", false, "TEST-NET-2 is for documentation"),
            ("203.0.113.1", false, "TEST-NET-3 is for documentation"),
            ("2001:db8::1", false, "2001:db8::/32 is for documentation"),
            ("198.18.0.1", false, "198.18/15 is for benchmarking"),
            ("198.19.255.255", false, "benchmarking ends at 198.19"),
            ("198.20.0.1", true, "198.20 is past benchmarking"),
            ("240.0.0.1", false, "240/4 is reserved"),
            ("fc00::1", false, "fc00::/7 is unique-local"),
            ("fd12:3456::1", false, "fd00::/8 is unique-local too"),
            ("fec0::1", false, "fec0::/10 is the old site-local"),
            ("::ffff:127.0.0.1", false, "an IPv4-mapped address is judged by its IPv4: loopback"),
            ("::ffff:10.1.2.3", false, "an IPv4-mapped private address is private"),
            ("::ffff:8.8.8.8", true, "an IPv4-mapped public address is public"),
            ("::10.0.0.1", false, "an IPv4-compatible address is judged by its IPv4"),
            ("64:ff9b::7f00:1", false, "NAT64 to 127.0.0.1 is loopback"),
            ("64:ff9b::a9fe:a9fe", false, "NAT64 to 169.254.169.254 is link-local"),
            ("64:ff9b::808:808", true, "NAT64 to 8.8.8.8 is public"),
            ("2002:c0a8:0101::1", false, "6to4 from 192.168.1.1 is private"),
            ("2001::1", false, "Teredo hides where it leads"),
            ("100::1", false, "the discard prefix is outside global unicast"),
        ];
        for (ip, public, why) in cases {
            assert_eq!(is_public(ip.parse().unwrap()), public, "{ip}: {why}");
        }
    }

    #[test]
    fn a_refusal_names_what_kind_of_address_it_met() {
        let kind = |ip: &str| non_public_kind(ip.parse().unwrap());
        assert_eq!(kind("127.0.0.1"), Some("a loopback address"));
        assert_eq!(kind("::ffff:127.0.0.1"), Some("a loopback address"));
        assert_eq!(kind("192.168.0.10"), Some("a private-network address"));
        assert_eq!(kind("169.254.169.254"), Some("a link-local address"));
        assert_eq!(kind("100.100.100.100"), Some("a carrier-grade NAT address"));
        assert_eq!(kind("8.8.8.8"), None);
    }
}
