//! Lore chunks: `lore/` by paragraph under a token cap, pack markdown by H2 section.
//!
//! Lore chunks (seed 002 §6.2.7, seed 001 content packs): `lore/` by paragraph under a 512-token
//! cap with sentence splitting, pack markdown by H2 section with its frontmatter, token counts in
//! `cl100k_base`.
//!
//! Lore prose has no frontmatter, so its chunks get their metadata by
//! mention: a chunk that names a place, person, faction or item of the
//! campaign carries that id, which is what the retriever's metadata filter
//! (seed 001 stage 1) matches on.

use serde::{Deserialize, Serialize};

use crate::campaign::{Campaign, Character, CharacterKind, EntryKind, Pack, PackEntry};

/// Seed 002 §6.2.7: no chunk is longer than this (`cl100k_base` tokens).
pub const MAX_CHUNK_TOKENS: usize = 512;

/// Tokens in `cl100k_base`, as seed 002 counts chunk sizes.
pub fn token_count(text: &str) -> usize {
    tiktoken_rs::cl100k_base_singleton()
        .encode_ordinary(text)
        .len()
}

/// Seed 001's corpora: what the campaign wrote, and what play made.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Corpus {
    Authored,
    History,
    #[default]
    All,
}

impl Corpus {
    pub fn includes_authored(self) -> bool {
        matches!(self, Corpus::Authored | Corpus::All)
    }
    pub fn includes_history(self) -> bool {
        matches!(self, Corpus::History | Corpus::All)
    }
}

/// What a chunk is about (seed 001 `ContentPackChunk.metadata`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ChunkMeta {
    /// `lore`, `world`, `npc`, `secret`, or a pack entry's type (`location`, `history`, …).
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub location_ids: Vec<String>,
    #[serde(default)]
    pub entity_ids: Vec<String>,
    #[serde(default)]
    pub faction_ids: Vec<String>,
    #[serde(default)]
    pub thread_ids: Vec<String>,
    #[serde(default)]
    pub tags: Vec<String>,
}

/// One retrievable piece of authored text.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Chunk {
    /// `file_path#chunk_index`, stable while the file is unchanged.
    pub id: String,
    /// Relative to the campaign.
    pub file_path: String,
    /// `Title > Section`.
    pub section_path: String,
    pub chunk_index: usize,
    pub paragraph_id: usize,
    /// `paragraph`, `sentence` (a long paragraph split) or `section` (a markdown H2).
    pub method: String,
    pub text: String,
    pub meta: ChunkMeta,
    pub token_count: usize,
}

impl Chunk {
    /// What the keyword index reads beside the text: the section path and
    /// the tags, so a chunk is found by what its document is about as well
    /// as by its own words (weighted below the text; see `Store::lore_keywords`).
    pub fn keyword_context(&self) -> String {
        let mut out = self.section_path.clone();
        for tag in &self.meta.tags {
            out.push(' ');
            out.push_str(&tag.replace('_', " "));
        }
        out
    }
}

/// Blocks separated by blank lines.
fn blocks(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            if !current.trim().is_empty() {
                out.push(std::mem::take(&mut current).trim().to_owned());
            }
            current.clear();
        } else {
            if !current.is_empty() {
                current.push('\n');
            }
            current.push_str(line);
        }
    }
    if !current.trim().is_empty() {
        out.push(current.trim().to_owned());
    }
    out
}

/// Sentences: split after `.`, `!` or `?` (and closing quotes) followed by whitespace.
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (i, &(at, c)) in chars.iter().enumerate() {
        if matches!(c, '.' | '!' | '?') {
            let mut j = i + 1;
            while j < chars.len() && matches!(chars[j].1, '"' | '\'' | '”' | '’' | ')') {
                j += 1;
            }
            if j < chars.len() && chars[j].1.is_whitespace() {
                let end = chars[j].0;
                let s = text[start..end].trim();
                if !s.is_empty() {
                    out.push(s);
                }
                start = end;
            }
            let _ = at;
        }
    }
    let rest = text[start..].trim();
    if !rest.is_empty() {
        out.push(rest);
    }
    out
}

/// Text under the cap: itself, or its sentences packed greedily (a single
/// sentence over the cap is cut at word boundaries).
fn capped(text: &str) -> Vec<String> {
    if token_count(text) <= MAX_CHUNK_TOKENS {
        return vec![text.to_owned()];
    }
    let mut pieces: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut units: Vec<String> = Vec::new();
    for s in sentences(text) {
        if token_count(s) <= MAX_CHUNK_TOKENS {
            units.push(s.to_owned());
        } else {
            // A run-on sentence: words, packed.
            let mut part = String::new();
            for w in s.split_whitespace() {
                if !part.is_empty() && token_count(&format!("{part} {w}")) > MAX_CHUNK_TOKENS {
                    units.push(std::mem::take(&mut part));
                }
                if !part.is_empty() {
                    part.push(' ');
                }
                part.push_str(w);
            }
            if !part.is_empty() {
                units.push(part);
            }
        }
    }
    for u in units {
        let joined = if current.is_empty() {
            u.clone()
        } else {
            format!("{current} {u}")
        };
        if token_count(&joined) > MAX_CHUNK_TOKENS && !current.is_empty() {
            pieces.push(std::mem::replace(&mut current, u));
        } else {
            current = joined;
        }
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    pieces
}

fn heading(block: &str) -> Option<(usize, &str)> {
    let level = block.chars().take_while(|&c| c == '#').count();
    (level > 0 && !block.contains('\n') && block[level..].starts_with(' '))
        .then(|| (level, block[level..].trim()))
}

/// Seed 002 §6.2.7: one chunk per paragraph (split on blank lines), long
/// paragraphs split on sentences. Heading-only paragraphs name the section
/// instead of becoming chunks.
pub fn paragraph_chunks(file_path: &str, text: &str, meta: &ChunkMeta) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut title = String::new();
    let mut section = String::new();
    for (paragraph_id, block) in blocks(strip_frontmatter(text)).iter().enumerate() {
        if let Some((level, h)) = heading(block) {
            if level == 1 {
                h.clone_into(&mut title);
                section.clear();
            } else {
                h.clone_into(&mut section);
            }
            continue;
        }
        let pieces = capped(block);
        let method = if pieces.len() > 1 {
            "sentence"
        } else {
            "paragraph"
        };
        for piece in pieces {
            let chunk_index = out.len();
            out.push(Chunk {
                id: format!("{file_path}#{chunk_index}"),
                file_path: file_path.to_owned(),
                section_path: join_path(&title, &section),
                chunk_index,
                paragraph_id,
                method: method.into(),
                token_count: token_count(&piece),
                text: piece,
                meta: meta.clone(),
            });
        }
    }
    out
}

/// Seed 001: a markdown document chunked by header: the H1 intro is one
/// chunk, each H2 section another (H3+ merged into their H2).
pub fn section_chunks(file_path: &str, body: &str, meta: &ChunkMeta) -> Vec<Chunk> {
    let mut title = String::new();
    let mut sections: Vec<(String, String)> = vec![(String::new(), String::new())];
    for line in strip_frontmatter(body).lines() {
        if let Some(t) = line.strip_prefix("# ") {
            t.trim().clone_into(&mut title);
        } else if let Some(s) = line.strip_prefix("## ") {
            sections.push((s.trim().to_owned(), String::new()));
        } else if let Some((_, text)) = sections.last_mut() {
            text.push_str(line);
            text.push('\n');
        }
    }
    let mut out = Vec::new();
    for (paragraph_id, (name, text)) in sections.into_iter().enumerate() {
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let pieces = capped(text);
        for piece in pieces {
            let chunk_index = out.len();
            out.push(Chunk {
                id: format!("{file_path}#{chunk_index}"),
                file_path: file_path.to_owned(),
                section_path: join_path(&title, &name),
                chunk_index,
                paragraph_id,
                method: "section".into(),
                token_count: token_count(&piece),
                text: piece,
                meta: meta.clone(),
            });
        }
    }
    out
}

fn join_path(title: &str, section: &str) -> String {
    match (title.is_empty(), section.is_empty()) {
        (_, true) => title.to_owned(),
        (true, false) => section.to_owned(),
        (false, false) => format!("{title} > {section}"),
    }
}

fn strip_frontmatter(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("---\n") else {
        return text;
    };
    rest.find("\n---")
        .map_or(text, |end| rest[end + 4..].trim_start_matches(['\n', '\r']))
}

/// Names the campaign knows, to tag lore prose by mention.
struct Names {
    /// (lowercase name, id, kind)
    names: Vec<(String, String, &'static str)>,
}

impl Names {
    fn of(c: &Campaign) -> Self {
        let mut names = Vec::new();
        let mut add = |name: &str, id: &str, kind: &'static str| {
            let name = name.trim().to_lowercase();
            let name = name.strip_prefix("the ").unwrap_or(&name).to_owned();
            if name.len() > 3 && !names.iter().any(|(n, i, _)| *n == name && i == id) {
                names.push((name, id.to_owned(), kind));
            }
        };
        for l in c.locations.values() {
            add(&l.name, &l.id, "location");
        }
        for f in c.factions.values() {
            add(&f.name, &f.id, "faction");
        }
        for i in c.items.values() {
            add(&i.name, &i.id, "entity");
        }
        for ch in c.characters.values() {
            if ch.kind == CharacterKind::Npc {
                add(&ch.name, &ch.id, "entity");
                // First names: people are called by them.
                if let Some(first) = ch.name.split_whitespace().next() {
                    add(first, &ch.id, "entity");
                }
            }
        }
        for t in c.world.threads.values() {
            add(&t.title, &t.id, "thread");
        }
        Self { names }
    }

    fn tag(&self, text: &str, meta: &mut ChunkMeta) {
        let lower = text.to_lowercase();
        for (name, id, kind) in &self.names {
            if !mentions(&lower, name) {
                continue;
            }
            let list = match *kind {
                "location" => &mut meta.location_ids,
                "faction" => &mut meta.faction_ids,
                "thread" => &mut meta.thread_ids,
                _ => &mut meta.entity_ids,
            };
            if !list.contains(id) {
                list.push(id.clone());
            }
        }
    }
}

/// Whole-word containment.
fn mentions(haystack: &str, needle: &str) -> bool {
    haystack.match_indices(needle).any(|(at, _)| {
        let before = haystack[..at].chars().next_back();
        let after = haystack[at + needle.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

fn kind_name(k: EntryKind) -> &'static str {
    match k {
        EntryKind::Location => "location",
        EntryKind::Npc => "npc",
        EntryKind::Faction => "faction",
        EntryKind::Culture => "culture",
        EntryKind::History => "history",
        EntryKind::Technology => "technology",
        EntryKind::Item => "item",
        EntryKind::Event => "event",
    }
}

/// Every authored chunk of a campaign: `lore/**` and `world/setting.md` by
/// paragraph; pack entries by section with their frontmatter; each NPC's
/// description and secrets (type `npc` / `secret`, for NPC briefings).
pub fn campaign_chunks(c: &Campaign) -> Vec<Chunk> {
    let names = Names::of(c);
    let mut out = Vec::new();
    let mut push = |mut chunks: Vec<Chunk>, base: &ChunkMeta| {
        for ch in &mut chunks {
            ch.meta = base.clone();
            names.tag(&format!("{} {}", ch.section_path, ch.text), &mut ch.meta);
        }
        out.extend(chunks);
    };
    for doc in &c.lore {
        let path = doc.path.to_string_lossy().replace('\\', "/");
        let meta = ChunkMeta {
            kind: "lore".into(),
            tags: doc.keywords.clone(),
            ..ChunkMeta::default()
        };
        push(paragraph_chunks(&path, &doc.text, &meta), &meta);
    }
    if let Some(setting) = c.prose.get("setting") {
        let meta = ChunkMeta {
            kind: "world".into(),
            tags: vec!["setting".into()],
            ..ChunkMeta::default()
        };
        push(paragraph_chunks("world/setting.md", setting, &meta), &meta);
    }
    for pack in &c.packs {
        for entry in &pack.entries {
            let (chunks, meta) = entry_chunks(pack, entry);
            push(chunks, &meta);
        }
    }
    for ch in c.characters.values() {
        if ch.kind != CharacterKind::Npc || matches!(ch.origin, crate::campaign::Origin::Pack(_)) {
            continue;
        }
        for (chunks, meta) in npc_chunks(ch) {
            push(chunks, &meta);
        }
    }
    out
}

/// A pack entry by H2 section, about the entry itself and what it names
/// (ids qualified by the pack's).
fn entry_chunks(pack: &Pack, entry: &PackEntry) -> (Vec<Chunk>, ChunkMeta) {
    let qualify = |ids: &[String]| -> Vec<String> {
        ids.iter()
            .map(|r| {
                if r.contains(':') {
                    r.clone()
                } else {
                    format!("{}:{r}", pack.manifest.id)
                }
            })
            .collect()
    };
    let mut meta = ChunkMeta {
        kind: kind_name(entry.meta.kind).into(),
        location_ids: qualify(&entry.meta.related_locations),
        entity_ids: qualify(&entry.meta.related_entities),
        faction_ids: qualify(&entry.meta.related_factions),
        thread_ids: entry.meta.related_threads.clone(),
        tags: entry.meta.tags.clone(),
    };
    match entry.meta.kind {
        EntryKind::Location => meta.location_ids.insert(0, entry.id.clone()),
        EntryKind::Faction => meta.faction_ids.insert(0, entry.id.clone()),
        _ => meta.entity_ids.insert(0, entry.id.clone()),
    }
    let path = entry.path.to_string_lossy().replace('\\', "/");
    (section_chunks(&path, &entry.body, &meta), meta)
}

/// A campaign NPC's description (type `npc`) and secrets (type `secret`),
/// each headed by who they are about.
fn npc_chunks(ch: &Character) -> Vec<(Vec<Chunk>, ChunkMeta)> {
    let mut out = Vec::new();
    let dir = format!("characters/npcs/{}", ch.id);
    // Who the chunk is about heads its section path, so a question about
    // "the lamp-girl" meets the chunks of the NPC whose role that is.
    let who = match ch.profile.as_ref().map(|p| p.role.trim()) {
        Some(role) if !role.is_empty() => format!("{} ({role})", ch.name),
        _ => ch.name.clone(),
    };
    let headed = |mut chunks: Vec<Chunk>| {
        for c in &mut chunks {
            c.section_path = join_path(&who, &c.section_path);
        }
        chunks
    };
    let meta = ChunkMeta {
        kind: "npc".into(),
        entity_ids: vec![ch.id.clone()],
        ..ChunkMeta::default()
    };
    if !ch.description.trim().is_empty() {
        let text = format!("{}: {}", ch.name, ch.description.trim());
        let chunks = paragraph_chunks(&format!("{dir}/profile.json"), &text, &meta);
        out.push((headed(chunks), meta.clone()));
    }
    if let Some(secrets) = &ch.secrets {
        let meta = ChunkMeta {
            kind: "secret".into(),
            ..meta
        };
        let chunks = paragraph_chunks(&format!("{dir}/secrets.md"), secrets, &meta);
        out.push((headed(chunks), meta));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraphs_become_chunks_and_headings_name_their_section() {
        let text = "# Reedmere\n\nFirst paragraph.\n\n## Streets\n\nSecond one.\nStill second.\n\n\nThird.";
        let chunks = paragraph_chunks("lore/r.md", text, &ChunkMeta::default());
        let texts: Vec<_> = chunks.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(
            texts,
            ["First paragraph.", "Second one.\nStill second.", "Third."]
        );
        assert_eq!(chunks[0].section_path, "Reedmere");
        assert_eq!(chunks[1].section_path, "Reedmere > Streets");
        assert_eq!(chunks[2].id, "lore/r.md#2");
        assert!(chunks.iter().all(|c| c.method == "paragraph"));
    }

    #[test]
    fn a_paragraph_over_the_cap_is_split_on_sentences_under_it() {
        let sentence =
            "The ferry chain groaned under the black water while the lanterns burned green. ";
        let long = sentence.repeat(60);
        assert!(token_count(&long) > MAX_CHUNK_TOKENS);
        let chunks = paragraph_chunks("lore/long.md", &long, &ChunkMeta::default());
        assert!(chunks.len() >= 2);
        for c in &chunks {
            assert!(c.token_count <= MAX_CHUNK_TOKENS, "{}", c.token_count);
            assert!(c.text.ends_with("green."), "split inside a sentence");
            assert_eq!(c.method, "sentence");
            assert_eq!(c.paragraph_id, 0);
        }
        let words: usize = chunks
            .iter()
            .map(|c| c.text.split_whitespace().count())
            .sum();
        assert_eq!(words, long.split_whitespace().count(), "nothing lost");
    }

    #[test]
    fn sentences_split_after_terminal_punctuation_and_quotes() {
        assert_eq!(
            sentences("He said \"Go.\" Then left! Why? Dr. No"),
            ["He said \"Go.\"", "Then left!", "Why?", "Dr.", "No"]
        );
    }

    #[test]
    fn markdown_sections_are_chunks_with_their_path_and_h3_merged() {
        let body = "---\nid: x\n---\n# The Neon Dragon\n\nA dive bar.\n\n## Atmosphere\nHaze.\n\n### Smells\nOil.\n\n## History\nWon in a card game.\n";
        let chunks = section_chunks("pack/x.md", body, &ChunkMeta::default());
        let got: Vec<_> = chunks
            .iter()
            .map(|c| (c.section_path.as_str(), c.text.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("The Neon Dragon", "A dive bar."),
                ("The Neon Dragon > Atmosphere", "Haze.\n\n### Smells\nOil."),
                ("The Neon Dragon > History", "Won in a card game."),
            ]
        );
    }

    #[test]
    fn cl100k_counts_tokens() {
        assert_eq!(token_count("hello world"), 2);
        assert_eq!(token_count(""), 0);
    }

    #[test]
    fn mentions_are_whole_words() {
        assert!(mentions("ask hesper about it", "hesper"));
        assert!(!mentions("hesperides", "hesper"));
    }
}
