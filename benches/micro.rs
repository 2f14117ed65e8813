//! Criterion micro-benchmarks of the hot pure functions (issue 32): composing a turn's
//! context, the gate's decision, the small model's tool-call parser and the privacy
//! classifier, each on inputs sized like real use (`src/benching.rs` builds them and calls
//! the product's own functions). Each benchmark's name reads as what it measures.
//!
//! The figures to read are the ratios inside one run: a 1,000-message conversation against
//! a 10-message one, 200 rules against none. An absolute time from this shared machine is
//! not comparable with another run's.
//!
//! `cargo bench --locked --features benchmarks --bench micro` (add `-- --quick` for a short
//! run, or a name fragment to pick some: `-- gate`).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use skald::benching::{Conversation, GateCase, Provider, Reply};
use skald::providers::privacy::Tier;
use skald::rules::Effect;

fn composition(c: &mut Criterion) {
    let mut group = c.benchmark_group("context");
    let cases = [
        ("composing a turn's context from a 10-message conversation", Conversation::whole(10)),
        (
            "composing a turn's context from a 1,000-message conversation after compaction",
            Conversation::compacted(1_000),
        ),
        ("composing a turn's context from a 1,000-message conversation read whole", Conversation::whole(1_000)),
    ];
    for (name, conversation) in &cases {
        let composed = conversation.compose();
        assert!(composed.len() >= 2, "{name}: the prompt and at least one message");
        eprintln!("{name}: {} of {} rows read", conversation.rows_read(), conversation.messages());
        // Per row read, so Criterion's throughput line shows the cost per row.
        group.throughput(Throughput::Elements(conversation.rows_read() as u64));
        group.bench_function(*name, |b| b.iter(|| black_box(conversation).compose()));
    }
    group.finish();
}

fn gate(c: &mut Criterion) {
    let mut group = c.benchmark_group("gate");
    for rules in [0, 10, 200] {
        let case = GateCase::with_rules(rules);
        assert_eq!(case.rules(), rules);
        let decision = case.decide();
        // The call is neither refused nor allowed by these rules: every one is weighed.
        assert_eq!(decision.effect, Effect::Require, "{rules} rules: {decision:?}");
        let name = format!("the gate deciding a web_fetch call against {rules} rules");
        group.bench_function(name, |b| b.iter(|| black_box(&case).decide()));
    }
    group.finish();
}

fn tool_calls(c: &mut Criterion) {
    let mut group = c.benchmark_group("tool calls");
    let cases = [
        ("reading the one call in a short reply", Reply::short_with_one_call(), 1),
        ("reading three calls in a long reply", Reply::long_with_several_calls(), 3),
        ("reading a long reply that holds no call", Reply::long_with_none(), 0),
    ];
    for (name, reply, calls) in &cases {
        let parsed = reply.parse();
        assert_eq!(parsed.calls.len(), *calls, "{name}: {parsed:?}");
        group.throughput(Throughput::Bytes(reply.len() as u64));
        group.bench_function(*name, |b| b.iter(|| black_box(reply).parse()));
    }
    // What a streamed reply runs on its text before showing it.
    let (name, reply) = ("finding where a long streamed reply must hold back", Reply::long_with_none());
    assert!(reply.hold_from() < reply.len(), "{name}: the fence is held");
    group.throughput(Throughput::Bytes(reply.len() as u64));
    group.bench_function(name, |b| b.iter(|| black_box(&reply).hold_from()));
    group.finish();
}

fn privacy(c: &mut Criterion) {
    let mut group = c.benchmark_group("privacy");
    let cases = [
        ("classifying the built-in model as local", Provider::built_in(), Tier::Local),
        ("classifying a loopback server by its short URL as local", Provider::loopback(), Tier::Local),
        ("classifying a trusted network's IPv6 server as local", Provider::trusted_lan(), Tier::Local),
        ("classifying a remote service by its long URL as remote", Provider::remote(), Tier::Remote),
    ];
    for (name, provider, tier) in &cases {
        assert_eq!(provider.classify(), *tier, "{name}");
        group.bench_function(*name, |b| b.iter(|| black_box(provider).classify()));
    }
    group.finish();
}

criterion_group!(micro, composition, gate, tool_calls, privacy);
criterion_main!(micro);
