//! The story as one self-contained HTML file: a small player, the story and its pictures inlined.
//!
//! The player (`assets/ship/player.html`) shows passages, gated choices, grants, endings, the codex
//! in ranked tiers unlocked by codewords, and illustrations with captions, and keeps where the
//! reader is in localStorage. The story and its pictures are inlined as data, so the file opens
//! from disk with no network.

use std::path::Path;

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::story::model::StoryFile;

/// The player page, with `__TITLE__` and `__STORY_JSON__` to fill.
const PLAYER: &str = include_str!("../../assets/ship/player.html");

/// Markdown to HTML (pulldown-cmark; raw HTML in the prose is shown as
/// text), well-formed as XHTML too. A link or picture whose target is not
/// http, https, mailto or relative (`javascript:`, `data:`, `vbscript:`…)
/// keeps only its words (#43: a story runs no script).
pub fn render(markdown: &str) -> String {
    use pulldown_cmark::{Event, Parser, Tag, TagEnd};
    let mut dropped: Vec<bool> = Vec::new();
    let events = Parser::new(markdown).filter_map(|e| match e {
        Event::Html(t) | Event::InlineHtml(t) => Some(Event::Text(t)),
        Event::Start(Tag::Link { ref dest_url, .. } | Tag::Image { ref dest_url, .. }) => {
            let safe = safe_target(dest_url);
            dropped.push(!safe);
            safe.then_some(e)
        }
        Event::End(TagEnd::Link | TagEnd::Image) => {
            let unsafe_target = dropped.pop().unwrap_or(false);
            (!unsafe_target).then_some(e)
        }
        other => Some(other),
    });
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, events);
    out
}

/// Whether a link target may be followed from a story: http, https, mailto,
/// or a relative path or fragment (no scheme at all).
pub fn safe_target(target: &str) -> bool {
    // Browsers skip leading whitespace and control characters, and ignore
    // tabs and newlines inside a scheme (`java\tscript:`).
    let cleaned: String = target
        .trim_start_matches(|c: char| c.is_whitespace() || c.is_control())
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let scheme_end = cleaned.find([':', '/', '?', '#']);
    match scheme_end {
        Some(at) if cleaned[at..].starts_with(':') => {
            let scheme = cleaned[..at].to_ascii_lowercase();
            matches!(scheme.as_str(), "http" | "https" | "mailto")
        }
        _ => true,
    }
}

/// The player's script's hash, taken once.
static SCRIPT_HASH: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| script_hash(PLAYER).unwrap_or_default());

/// The player's own script's hash, for the page's Content-Security-Policy
/// (`'sha256-…'`): it runs, and no other script does.
fn script_hash(page: &str) -> Option<String> {
    use sha2::Digest as _;
    let start = page.find("<script>")? + "<script>".len();
    let end = start + page[start..].find("</script>")?;
    let digest = sha2::Sha256::digest(&page.as_bytes()[start..end]);
    Some(base64::engine::general_purpose::STANDARD.encode(digest))
}

/// A picture as a data URL, if the file is there.
fn inline(root: &Path, asset: &str) -> Option<String> {
    let bytes = std::fs::read(crate::story::load::asset_in(root, asset).ok()?).ok()?;
    let mime = super::media_type(asset)?;
    Some(format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    ))
}

/// The page, and notes (pictures that could not be inlined).
pub fn write(file: &StoryFile, root: &Path) -> (String, Vec<String>) {
    let mut notes = Vec::new();
    let mut passages = Map::new();
    for p in &file.passages {
        let mut art = Vec::new();
        for i in file
            .illustrations
            .iter()
            .filter(|i| i.depicts.contains(&p.id))
        {
            match inline(root, &i.asset) {
                Some(src) => art.push(json!({"src": src, "caption": i.caption})),
                None => notes.push(format!(
                    "{} (illustration `{}`) is missing or not a picture; left out",
                    i.asset, i.id
                )),
            }
        }
        passages.insert(
            p.id.clone(),
            json!({
                "html": render(&p.prose),
                "choices": p.choices.iter().map(|c| json!({
                    "label": c.label, "to": c.to, "requires": c.requires, "grants": c.grants,
                })).collect::<Vec<_>>(),
                "art": art,
            }),
        );
    }
    let codex: Vec<Value> = file
        .codex
        .iter()
        .map(|c| {
            let name = file
                .entities
                .iter()
                .find(|e| e.id == c.entity)
                .map_or(c.entity.as_str(), |e| e.name.as_str());
            let body = match &c.title {
                Some(t) => format!("**{t}**\n\n{}", c.content),
                None => c.content.clone(),
            };
            json!({"entity": c.entity, "name": name, "rank": c.rank, "when": c.visible_when, "html": render(&body)})
        })
        .collect();
    let data = json!({
        "id": file.meta.id,
        "title": file.meta.title,
        "start": super::start(file),
        "passages": passages,
        "codex": codex,
    });
    // `</` inside a script element would end it.
    let json = data.to_string().replace("</", "<\\/");
    let page = PLAYER
        .replace("__SCRIPT_HASH__", &SCRIPT_HASH)
        .replace("__TITLE__", &super::escape_xml(&file.meta.title))
        .replace("__STORY_JSON__", &json);
    (page, notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_that_would_run_script_keeps_only_its_words() {
        let prose = "Go [home](javascript:alert(1)), [back]( JaVaScRiPt:alert(2)), \
                     [in](vbscript:x), [data](data:text/html,<b>x</b>) or \
                     ![look](javascript:alert(3)) <script>alert(4)</script> \
                     <img src=x onerror=alert(5)>.";
        let html = render(prose);
        assert!(!html.to_lowercase().contains("javascript:"), "{html}");
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(!html.contains("href"), "{html}");
        assert!(html.contains("home") && html.contains("back"), "{html}");
        // The links a story may have stay links.
        let fine =
            render("[a](https://example.org) [b](mailto:x@y.z) [c](#end) [d](notes/p2.html)");
        assert_eq!(fine.matches("href=").count(), 4, "{fine}");
    }

    #[test]
    fn a_scheme_is_read_as_a_browser_reads_it() {
        for bad in [
            "javascript:x",
            " JavaScript:x",
            "java\tscript:x",
            "\u{1}javascript:x",
            "data:x",
            "file:///etc/passwd",
        ] {
            assert!(!safe_target(bad), "{bad:?}");
        }
        for good in [
            "https://a.b",
            "HTTP://a.b",
            "mailto:a@b",
            "#x",
            "p/q.html",
            "q?x=a:b",
            "/x:y",
        ] {
            assert!(safe_target(good), "{good:?}");
        }
    }

    #[test]
    fn the_page_allows_its_own_script_and_no_other() {
        use sha2::Digest as _;
        let (page, _) = write(
            &crate::story::synthetic::story(8, 2),
            std::path::Path::new("."),
        );
        let start = page.find("<script>").unwrap() + "<script>".len();
        let end = start + page[start..].find("</script>").unwrap();
        let digest = base64::engine::general_purpose::STANDARD
            .encode(sha2::Sha256::digest(&page.as_bytes()[start..end]));
        assert!(
            page.contains(&format!("script-src 'sha256-{digest}'")),
            "the policy names the player's script"
        );
        assert!(page.contains("default-src 'none'"));
        assert_eq!(page.matches("'unsafe-inline'").count(), 1, "styles only");
    }
}
