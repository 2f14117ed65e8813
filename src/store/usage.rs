//! Per-person usage totals in the shared database (§9): requests and tokens per calendar
//! day. The administrator's usage view and the roles' daily caps read them; nothing here
//! says what was asked.

use serde::Serialize;

use super::{StoreError, SystemStore};
use crate::ids::UserId;

/// Adds one model request to a person's day.
pub async fn add(
    store: &SystemStore,
    user: &UserId,
    day: &str,
    tokens_in: i64,
    tokens_out: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO usage_daily (user_id, day, requests, tokens_in, tokens_out) VALUES (?, ?, 1, ?, ?)
         ON CONFLICT (user_id, day) DO UPDATE SET requests = requests + 1,
             tokens_in = tokens_in + excluded.tokens_in, tokens_out = tokens_out + excluded.tokens_out",
    )
    .bind(user)
    .bind(day)
    .bind(tokens_in.max(0))
    .bind(tokens_out.max(0))
    .execute(store.pool())
    .await?;
    Ok(())
}

/// Tokens, in and out, a person used on `day`.
pub async fn tokens_on(store: &SystemStore, user: &UserId, day: &str) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT coalesce(sum(tokens_in + tokens_out), 0) FROM usage_daily WHERE user_id = ? AND day = ?",
    )
    .bind(user)
    .bind(day)
    .fetch_one(store.pool())
    .await?)
}

/// One person's totals, for the administrator.
#[derive(Debug, Serialize, sqlx::FromRow, ts_rs::TS)]
pub struct PersonUsage {
    pub user_id: String,
    pub name: String,
    pub today_requests: i64,
    pub today_tokens: i64,
    pub month_requests: i64,
    pub month_tokens: i64,
    pub total_requests: i64,
    pub total_tokens: i64,
}

/// Everyone's totals: `today`, the 30 days up to it, and all time.
pub async fn summary(store: &SystemStore, today: &str, month_start: &str) -> Result<Vec<PersonUsage>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT u.id AS user_id, u.name,
                coalesce(sum(CASE WHEN d.day = ?1 THEN d.requests END), 0) AS today_requests,
                coalesce(sum(CASE WHEN d.day = ?1 THEN d.tokens_in + d.tokens_out END), 0) AS today_tokens,
                coalesce(sum(CASE WHEN d.day >= ?2 THEN d.requests END), 0) AS month_requests,
                coalesce(sum(CASE WHEN d.day >= ?2 THEN d.tokens_in + d.tokens_out END), 0) AS month_tokens,
                coalesce(sum(d.requests), 0) AS total_requests,
                coalesce(sum(d.tokens_in + d.tokens_out), 0) AS total_tokens
         FROM users u LEFT JOIN usage_daily d ON d.user_id = u.id
         GROUP BY u.id ORDER BY u.name",
    )
    .bind(today)
    .bind(month_start)
    .fetch_all(store.pool())
    .await?)
}
