//! What an unlock costs on this machine: the calibrated argon2id derivation plus opening the
//! private SQLCipher file, median of 10, against a baseline of the floor parameters run in
//! the same invocation (so the ratio survives a noisy, shared machine).
//!
//! `cargo bench --bench unlock` (`SKALD_BENCH_ROUNDS`: how many of each, 10).

#![allow(clippy::print_stdout, reason = "a benchmark reports on stdout")]

use std::time::{Duration, Instant};

use skald::crypto::{self, Dek, KdfParams, KeyPair, Purpose};
use skald::ids::UserId;
use skald::store::private::{self, PrivateStore};

const PASSWORD: &[u8] = b"otter lantern quietly";

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn unwrap_median(params: KdfParams, runs: usize) -> Duration {
    let dek = Dek::generate();
    let wrapped = crypto::wrap(&dek, PASSWORD, "bench", Purpose::Password, params, 1).expect("wrap");
    median(
        (0..runs)
            .map(|_| {
                let started = Instant::now();
                crypto::unwrap(&wrapped, PASSWORD, "bench", Purpose::Password).expect("unwrap");
                started.elapsed()
            })
            .collect(),
    )
}

fn main() {
    let runs = std::env::var("SKALD_BENCH_ROUNDS").ok().and_then(|n| n.trim().parse().ok()).filter(|n| *n > 0);
    let runs: usize = runs.unwrap_or(10);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let calibrated = crypto::calibrate(Duration::from_millis(750));
    let floor = unwrap_median(KdfParams::FLOOR, runs);
    let kdf = unwrap_median(calibrated, runs);

    let dir = tempfile::tempdir().expect("temp dir");
    let (id, dek, salt, keys) = (UserId::generate(), Dek::generate(), crypto::file_salt(), KeyPair::generate());
    let path = private::path_for(dir.path(), &id);
    let open = runtime.block_on(async {
        PrivateStore::create(&path, &dek, &salt, &id, &keys).await.expect("create").close().await;
        let mut samples = Vec::new();
        for _ in 0..runs {
            let started = Instant::now();
            let store = PrivateStore::open(&path, &dek, &salt, &id).await.expect("open");
            samples.push(started.elapsed());
            store.close().await;
        }
        median(samples)
    });

    println!("Calibrated parameters on this machine: {calibrated}; median of {runs}.");
    println!();
    println!("| unlock | ms (median) | × the floor parameters' unwrap |");
    println!("|---|---|---|");
    println!("| unwrap with the floor parameters ({}), baseline | {} | 1.0× |", KdfParams::FLOOR, ms(floor));
    println!("| unwrap with the calibrated parameters | {} | {:.1}× |", ms(kdf), ratio(kdf, floor));
    println!("| open the private SQLCipher file | {} | {:.2}× |", ms(open), ratio(open, floor));
    println!("| unlock (unwrap + open) | {} | {:.1}× |", ms(kdf + open), ratio(kdf + open, floor));
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}
