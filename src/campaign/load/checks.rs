//! The checks every load phase shares: provenance, stat blocks, ids, and the words for them.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Against, PLAYER};
use crate::campaign::format::AssetMeta;
use crate::campaign::report::Report;

/// Seed 002 §6.2.11, with its exact messages.
pub(super) fn provenance(report: &mut Report, rel: &Path, line: Option<usize>, meta: &AssetMeta) {
    match (meta.generated, &meta.provenance) {
        (true, None) => report.error(rel, line, MISSING_PROVENANCE),
        (true, Some(p)) => {
            let has = |k: &str| {
                p.get(k)
                    .is_some_and(|v| v.as_str().is_some_and(|s| !s.trim().is_empty()))
            };
            if !(has("source_model") && has("generated_at") && has("seed_data")) {
                report.error(rel, line, MISSING_PROVENANCE);
            } else if let Some(at) = p.get("generated_at").and_then(Value::as_str)
                && !is_iso8601(at)
            {
                report.error(
                    rel,
                    line,
                    format!("provenance.generated_at `{at}` is not an ISO 8601 datetime (e.g. 2026-02-03T11:00:00Z)"),
                );
            }
        }
        (false, Some(_)) => report.error(rel, line, HUMAN_WITH_PROVENANCE),
        (false, None) => {}
    }
}

/// Seed 002 §6.2.11's message for a generated asset without full provenance.
pub const MISSING_PROVENANCE: &str = "Generated asset missing provenance (generated=true requires provenance.source_model, provenance.generated_at, provenance.seed_data)";
/// Seed 002 §6.2.11's message for a human asset with provenance.
pub const HUMAN_WITH_PROVENANCE: &str = "Human-created asset must not contain provenance (generated=false conflicts with provenance object)";

/// RFC 3339 / ISO 8601 date-time (`2026-02-03T11:00:00Z`, with optional fraction and offset), checked with jsonschema's `date-time` format.
#[expect(
    clippy::expect_used,
    reason = "a fixed schema, compiled in every test run"
)]
fn is_iso8601(text: &str) -> bool {
    static CHECK: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    CHECK
        .get_or_init(|| {
            jsonschema::options()
                .should_validate_formats(true)
                .build(&serde_json::json!({"type": "string", "format": "date-time"}))
                .expect("a fixed schema compiles")
        })
        .is_valid(&Value::String(text.to_owned()))
}

impl Against<'_> {
    /// A stat block (at `rel`, `line`) fits the ruleset's `character_stat_schema`.
    pub(super) fn check_stats(
        &self,
        report: &mut Report,
        rel: &Path,
        line: Option<usize>,
        stats: &serde_json::Map<String, Value>,
    ) {
        let Some(v) = &self.stats else {
            return;
        };
        let ruleset = &self.ruleset.id;
        let value = Value::Object(stats.clone());
        for e in v.iter_errors(&value) {
            let ptr = e.instance_path().to_string();
            report.error(
                rel,
                line,
                format!(
                    "stats {} do not fit ruleset `{ruleset}`'s character_stat_schema: {}{e}",
                    crate::campaign::brief(&value),
                    field_of(&ptr)
                ),
            );
        }
    }
}

pub(super) fn field_of(pointer: &str) -> String {
    if pointer.is_empty() {
        String::new()
    } else {
        format!("`{}`: ", pointer.trim_start_matches('/').replace('/', "."))
    }
}

pub(super) fn check_id(report: &mut Report, rel: &Path, id: &str) {
    let ok = !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
    if !ok || id == PLAYER {
        report.error(
            rel,
            None,
            format!("NPC folder `{id}` is not a usable id: lowercase letters, digits, `_` and `-`, and not `player`"),
        );
    }
}

pub(super) fn known<'a>(ids: impl Iterator<Item = &'a String>) -> String {
    let all: Vec<&str> = ids.map(String::as_str).collect();
    format!("known: {}", all.join(", "))
}

pub(super) fn first_paragraph(body: &str) -> String {
    body.split("\n\n")
        .map(str::trim)
        .find(|p| !p.is_empty() && !p.starts_with('#'))
        .unwrap_or("")
        .to_owned()
}

pub(super) fn system_ruleset_ids(dirs: &[PathBuf]) -> Vec<String> {
    let mut ids: Vec<String> = dirs
        .iter()
        .flat_map(|d| crate::files::list(d))
        .filter(|p| crate::files::is_file(&p.join(crate::rules::ruleset::RULESET_FILE)))
        .filter_map(|p| p.file_name().and_then(|n| n.to_str()).map(str::to_owned))
        .collect();
    ids.sort();
    ids
}
