//! The integration suite: one binary, so the real `skald` is built once and every test
//! spawns it on 127.0.0.1 with a temporary data directory.

mod admin;
mod boundary;
mod canary;
mod chat;
mod connections;
mod crash;
mod docs;
mod documents;
mod extract;
mod injection;
mod keyring;
mod layers;
mod load;
mod neutrality;
mod people;
mod privacy;
mod rules;
mod serve;
mod support;
mod tamper;
mod verify;
mod ws;
