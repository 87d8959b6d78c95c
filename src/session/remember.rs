//! A save's memory and lore at play (feature `store`): recall for a turn, the event it leaves.
//!
//! The lore index is kept in step with the campaign; each turn recalls what it
//! is shown from it and from memory; each committed turn leaves a memory event.
//!
//! Everything a turn is shown is decided here, before the turn starts, and
//! recorded with it ([`Recalled`]), so replay shows the model exactly the same
//! lore and memories without embedding anything.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use serde_json::Value;
use web_time::Instant;

use super::drafts::{campaign_names, grounded};
use super::phrasing::{TRIED, verb_phrase};
use super::recalled::Recalled;
use super::turn::{PERSONA, PlayerInput, Ruling, SessionState, TurnResult};
use crate::campaign::Campaign;
use crate::memory::chunk::Corpus;
use crate::memory::recall::{LoreIndex, LoreQuery, MemoryIndex, MemoryQuery, query_text};
use crate::memory::{Embedder, MemoryEvent, Significance, campaign_chunks, dot};
use crate::rules::Check;
use crate::store::Store;
use crate::transcript::stream::Kind;

/// The similarity a memory needs to be shown in a session. Seed 002's
/// default is 0.7 ([`crate::memory::recall::DEFAULT_THRESHOLD`]), but all-MiniLM-L6-v2 scores a
/// player's action against a past-tense summary of a relevant event at
/// 0.2–0.6 (tests/retrieval.rs: 0 of 38 labelled pairs reach 0.7), so at 0.7
/// nothing would ever be recalled.
pub const SESSION_THRESHOLD: f32 = 0.35;

/// A plot beat's condition holds when a remembered event matches it this well
/// (`MiniLM` cosine; measured on the Drowned Reach beats in `tests/beats.rs`).
pub const BEAT_THRESHOLD: f32 = 0.5;

/// See [`RecallConfig::stat_match`]. Measured on the default ruleset's cues
/// over 28 labelled moves: 15 marked with the right stat, 3 with a wrong one
/// ("Reassure the frightened passengers" took nerve), 10 unmarked; four
/// neutral moves never marked (`tests/retrieval.rs`).
pub const STAT_MATCH: f32 = 0.3;

/// A choice the persona is unlikely to pull off (seed 002 §4.2.1).
#[derive(Clone, Debug, PartialEq)]
pub struct Difficulty {
    /// The stat the move leans on, and the persona's value in it.
    pub stat: String,
    pub value: i64,
    /// The chance of a result better than failure, with no situational modifiers.
    pub chance: f64,
}

impl std::fmt::Display for Difficulty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "unlikely: {} {:+}, {:.0}%",
            self.stat,
            self.value,
            self.chance * 100.0
        )
    }
}

/// How much a turn is shown (small models have small contexts).
#[derive(Clone, Debug)]
pub struct RecallConfig {
    pub lore_limit: usize,
    /// Seed 001's budget cap for the narrator's lore.
    pub lore_tokens: usize,
    pub memory_limit: usize,
    pub threshold: f32,
    /// How well remembered events must match a plot beat's condition for it to hold ([`SessionMemory::support`]).
    pub beat_threshold: f32,
    /// Seed 002 §4.2.1's `showDifficultyThreshold`: choices whose chance of
    /// success is below this are marked ([`SessionMemory::difficulty`]).
    pub show_difficulty_below: f64,
    /// How close a choice must come to one of a stat's cues to lean on that stat (cosine).
    pub stat_match: f32,
}

impl Default for RecallConfig {
    fn default() -> Self {
        Self {
            lore_limit: 2,
            lore_tokens: 400,
            memory_limit: 3,
            threshold: SESSION_THRESHOLD,
            beat_threshold: BEAT_THRESHOLD,
            show_difficulty_below: 0.5,
            stat_match: STAT_MATCH,
        }
    }
}

/// The memory side of an open save.
pub struct SessionMemory {
    embedder: Option<Arc<dyn Embedder>>,
    pub lore: LoreIndex,
    pub memories: MemoryIndex,
    branch: HashSet<String>,
    pub config: RecallConfig,
    /// The ruleset's stat cues (`Ruleset::stat_cues`) with their vectors.
    stat_cues: Vec<(String, Vec<f32>)>,
    /// Routes moves to the skills that list moves (#25); none without an embedder.
    router: Option<crate::skills::route::Router>,
}

impl std::fmt::Debug for SessionMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionMemory")
            .field(
                "embedder",
                &self.embedder.as_ref().map(|e| e.key().to_owned()),
            )
            .field("lore", &self.lore.len())
            .field("memories", &self.memories.len())
            .finish_non_exhaustive()
    }
}

/// A prepared lore question: the query, its vector (when an embedder is
/// loaded) and the keyword scores of the chunks.
#[derive(Clone, Debug)]
pub struct LoreAsk {
    pub query: LoreQuery,
    pub vector: Option<Vec<f32>>,
    pub keywords: Vec<(String, f32)>,
}

/// A fingerprint of the chunks (ids and texts), to know when the campaign changed.
fn fingerprint(chunks: &[crate::memory::Chunk]) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for c in chunks {
        c.id.hash(&mut h);
        c.section_path.hash(&mut h);
        c.text.hash(&mut h);
        serde_json::to_string(&c.meta)
            .unwrap_or_default()
            .hash(&mut h);
    }
    format!("{:016x}-{}", h.finish(), chunks.len())
}

/// Whether the save's lore index must be (re)made for the chunks whose
/// [`fingerprint`] is `print`: the campaign changed, or an embedder (`model`)
/// is at hand that did not make its vectors.
fn lore_index_stale(store: &Store, print: &str, model: Option<&str>) -> Result<bool, MemoryError> {
    let (stored, stored_model) = store.lore_index_info()?;
    Ok(stored.as_deref() != Some(print) || (model.is_some() && stored_model.as_deref() != model))
}

/// Whether an offered choice names an approach a stat check could judge:
/// "Wait" or "Look around" do not, and are never embedded.
fn names_an_approach(choice: &str) -> bool {
    choice.split_whitespace().count() >= 3
}

/// Why a save's memory could not be read or indexed.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error("indexing the campaign's lore: {0}")]
    Index(#[source] crate::memory::EmbedError),
}

impl SessionMemory {
    /// The texts [`SessionMemory::open`] would embed with the embedder whose
    /// key is `model`: the campaign's lore when the save's index is not yet
    /// made by it for this campaign, and the stat cues. The page reads them
    /// ahead a few a frame (`memory::memo`) so the open does not hold its frame.
    pub fn texts_to_embed(
        store: &Store,
        campaign: &Campaign,
        model: &str,
    ) -> Result<Vec<String>, MemoryError> {
        let chunks = campaign_chunks(campaign);
        let mut texts = Vec::new();
        if lore_index_stale(store, &fingerprint(&chunks), Some(model))? {
            texts.extend(chunks.iter().map(embed_text));
        }
        for (_, cues) in campaign.ruleset.stat_cues() {
            texts.extend(cues);
        }
        Ok(texts)
    }

    /// The offered choices [`SessionMemory::judge_choices`] embeds.
    pub fn choices_to_embed(choices: Vec<String>) -> impl Iterator<Item = String> {
        choices.into_iter().filter(|c| names_an_approach(c))
    }

    /// Load the save's memory, (re)building the lore index when the campaign
    /// changed or vectors are missing that the embedder can now make.
    pub fn open(
        store: &mut Store,
        campaign: &Campaign,
        embedder: Option<Arc<dyn Embedder>>,
    ) -> Result<Self, MemoryError> {
        let chunks = campaign_chunks(campaign);
        let print = fingerprint(&chunks);
        let want_model = embedder.as_ref().map(|e| e.key().to_owned());
        if lore_index_stale(store, &print, want_model.as_deref())? {
            let vectors = match &embedder {
                Some(e) => {
                    let texts: Vec<String> = chunks.iter().map(embed_text).collect();
                    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                    Some(e.embed(&refs).map_err(MemoryError::Index)?)
                }
                None => None,
            };
            store.index_lore(&chunks, vectors.as_deref(), &print, want_model.as_deref())?;
        }
        let lore = store.lore_index()?;
        let memories = store.memory_index()?;
        let branch = store.branch_set()?;
        let mut stat_cues = Vec::new();
        if let Some(e) = &embedder {
            for (stat, cues) in campaign.ruleset.stat_cues() {
                let refs: Vec<&str> = cues.iter().map(String::as_str).collect();
                match e.embed(&refs) {
                    Ok(vectors) => stat_cues.extend(vectors.into_iter().map(|v| (stat.clone(), v))),
                    Err(err) => tracing::warn!("embedding the cues of stat `{stat}` failed: {err}"),
                }
            }
        }
        Ok(Self {
            router: embedder.clone().map(crate::skills::route::Router::new),
            embedder,
            lore,
            memories,
            branch,
            config: RecallConfig::default(),
            stat_cues,
        })
    }

    /// Seed 002 §4.2.1's difficulty indicator for an offered choice: the stat
    /// it leans on (the one with the cue closest to it, if close enough) and
    /// the persona's chance on the ruleset's stat check, when that chance is
    /// under `show_difficulty_below`. A move of one or two words ("Wait")
    /// names no approach and is never marked. Needs the embedder.
    pub fn difficulty(&self, state: &SessionState, choice: &str) -> Option<Difficulty> {
        self.judge_choices(state, &[choice.to_owned()])
            .pop()
            .and_then(|(mark, _)| mark)
    }

    /// Each offered choice's difficulty mark and its ruling (#21 rules fast
    /// path), from one embedding batch: a move whose closest stat cue is
    /// close enough rolls the ruleset's stat check with that stat (the one
    /// its mark shows), any other move simply happens. Without the embedder
    /// nothing is told, and a picked choice goes to the referee.
    pub fn judge_choices(
        &self,
        state: &SessionState,
        choices: &[String],
    ) -> Vec<(Option<Difficulty>, Option<Ruling>)> {
        // A ruleset without a stat check, or no embedder: only the referee can tell.
        let check = state
            .campaign
            .ruleset
            .mechanics_guidance
            .checks
            .iter()
            .find(|c| c.bind.is_some());
        let (Some(check), Some(embedder)) = (check, &self.embedder) else {
            return vec![(None, None); choices.len()];
        };
        let moves: Vec<&str> = choices
            .iter()
            .map(String::as_str)
            .filter(|c| names_an_approach(c))
            .collect();
        let vectors = if moves.is_empty() {
            Vec::new()
        } else {
            match embedder.embed(&moves) {
                Ok(v) => v,
                Err(err) => {
                    tracing::warn!("embedding the choices failed, none is marked: {err}");
                    return vec![(None, None); choices.len()];
                }
            }
        };
        choices
            .iter()
            .map(|c| {
                // "Wait", "Look around": no approach named, nothing to roll.
                let Some(v) = moves
                    .iter()
                    .position(|m| *m == c.as_str())
                    .and_then(|i| vectors.get(i))
                else {
                    return (None, Some(Ruling::None));
                };
                self.judge(state, check, v)
            })
            .collect()
    }

    /// The difficulty mark and the ruling of a move embedded as `v`, on the
    /// ruleset's stat `check`.
    fn judge(
        &self,
        state: &SessionState,
        check: &Check,
        v: &[f32],
    ) -> (Option<Difficulty>, Option<Ruling>) {
        // No stat cues: only the referee can tell.
        let ruleset = &state.campaign.ruleset;
        let Some((stat, score)) = self
            .stat_cues
            .iter()
            .map(|(stat, cue)| (stat, dot(cue, v)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
        else {
            return (None, None);
        };
        if score < self.config.stat_match {
            return (None, Some(Ruling::None));
        }
        let ruling = Some(Ruling::Check {
            check: check.id.clone(),
            stat: Some(stat.clone()),
        });
        let Some(block) = state.world.characters.get(PERSONA).map(|c| &c.stats) else {
            return (None, ruling);
        };
        let mark = ruleset
            .success_chance(check, block, Some(stat))
            .ok()
            .flatten()
            .filter(|chance| *chance < self.config.show_difficulty_below)
            .map(|chance| Difficulty {
                stat: stat.clone(),
                value: block.get(stat).and_then(Value::as_i64).unwrap_or(0),
                chance,
            });
        (mark, ruling)
    }

    /// How well the events remembered on this branch bear out `condition`
    /// (a plot beat's condition in words), 0..=1: the best cosine similarity
    /// of any memory to it; without an embedder, the largest share of the
    /// condition's words (four letters or more) one memory contains.
    pub fn support(&self, condition: &str) -> f32 {
        if let Some(e) = &self.embedder
            && let Ok(mut v) = e.embed(&[condition])
            && let Some(v) = v.pop()
        {
            let mut q = MemoryQuery::new(condition);
            q.limit = 1;
            q.threshold = -1.0;
            return self
                .memories
                .recall(&q, Some(&v), Some(&self.branch))
                .first()
                .map_or(0.0, |h| h.relevance.max(0.0));
        }
        let words: Vec<String> = condition
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.len() >= 4)
            .map(str::to_lowercase)
            .collect();
        if words.is_empty() {
            return 0.0;
        }
        self.memories
            .events
            .iter()
            .filter(|e| self.branch.contains(&e.scene_id))
            .map(|e| {
                let text = e.summary.to_lowercase();
                #[expect(clippy::cast_precision_loss, reason = "a handful of words")]
                let share = words.iter().filter(|w| text.contains(w.as_str())).count() as f32
                    / words.len() as f32;
                share
            })
            .fold(0.0, f32::max)
    }

    /// Which of `skills` the move `text` calls for (#25, [`crate::skills::route`]);
    /// `None` without an embedder, or when embedding fails (the planner is
    /// then offered every skill).
    pub fn route_skills(
        &self,
        skills: &crate::skills::manifest::Discovery,
        text: &str,
    ) -> Option<crate::skills::route::Routing> {
        let router = self.router.as_ref()?;
        match router.route(skills, text) {
            Ok(r) => Some(r),
            Err(err) => {
                tracing::warn!(
                    "routing the move to skills failed, the planner decides alone: {err}"
                );
                None
            }
        }
    }

    pub fn has_embedder(&self) -> bool {
        self.embedder.is_some()
    }

    /// After a rewind or reload: the memories of the branch the save is on now.
    pub fn reload(&mut self, store: &Store) -> Result<(), MemoryError> {
        self.memories = store.memory_index()?;
        self.branch = store.branch_set()?;
        Ok(())
    }

    fn embed_one(&self, text: &str) -> Option<Vec<f32>> {
        let e = self.embedder.as_ref()?;
        match e.embed(&[text]) {
            Ok(mut v) => v.pop(),
            Err(err) => {
                tracing::warn!("embedding failed, recall falls back to keywords: {err}");
                None
            }
        }
    }

    /// The query vector of a turn: the action alone and the action in its
    /// scene (place, people), embedded together and averaged, so neither the
    /// bare words nor the scene's names drown the other out.
    fn embed_query(&self, in_scene: &str, action: &str) -> Option<Vec<f32>> {
        let e = self.embedder.as_ref()?;
        let texts: Vec<&str> = if action.trim().is_empty() || action == in_scene {
            vec![in_scene]
        } else {
            vec![in_scene, action]
        };
        match e.embed(&texts) {
            Ok(vectors) => {
                let mut sum = vec![0.0_f32; vectors.first()?.len()];
                for v in &vectors {
                    for (s, x) in sum.iter_mut().zip(v) {
                        *s += x;
                    }
                }
                let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
                (norm > 0.0).then(|| sum.into_iter().map(|x| x / norm).collect())
            }
            Err(err) => {
                tracing::warn!("embedding failed, recall falls back to keywords: {err}");
                None
            }
        }
    }

    /// Seed 001's retrieval query for an action at a place among people:
    /// the lore query (metadata for stage 1, text and budget), its vector
    /// and the keyword scores. `recall_for` asks with this; the retrieval
    /// quality test measures exactly this.
    pub fn lore_query(
        &self,
        store: &Store,
        place: (&str, &str),
        present: &[String],
        names: &[String],
        action: &str,
    ) -> LoreAsk {
        let (location, location_name) = place;
        let text = query_text(location_name, names, action, &[], None);
        let vector = self.embed_query(&text, action);
        let keywords = store
            .lore_keywords(&format!("{action} {location_name}"), 50)
            .unwrap_or_default();
        LoreAsk {
            query: LoreQuery {
                text,
                location: (!location.is_empty()).then(|| location.to_owned()),
                entities: present.to_vec(),
                corpus: Corpus::Authored,
                max_tokens: self.config.lore_tokens,
                limit: self.config.lore_limit,
                ..LoreQuery::default()
            },
            vector,
            keywords,
        }
    }

    /// What the coming turn is shown: lore for where the persona is and what
    /// they do, and the memories closest to it.
    pub fn recall_for(&self, store: &Store, state: &SessionState, input: &str) -> Recalled {
        let started = Instant::now();
        let (location, location_name) = state.place();
        let present = present_ids(state);
        let names: Vec<String> = present
            .iter()
            .filter(|id| id.as_str() != PERSONA)
            .map(|id| {
                state
                    .campaign
                    .characters
                    .get(id)
                    .map_or_else(|| id.clone(), |c| c.name.clone())
            })
            .collect();
        let mut ask = self.lore_query(store, (&location, &location_name), &present, &names, input);
        ask.query.threads = state.world.threads.keys().cloned().collect();
        let lore = self
            .lore
            .retrieve(&ask.query, ask.vector.as_deref(), &ask.keywords);
        // Memories: recalled by the action itself (with the scene around it).
        let memories = self.memories.recall(
            &MemoryQuery {
                limit: self.config.memory_limit,
                threshold: self.config.threshold,
                ..MemoryQuery::new(ask.query.text.clone())
            },
            ask.vector.as_deref(),
            Some(&self.branch),
        );
        let episodic_bonus = memories
            .iter()
            .any(|m| m.episodic && m.relevance >= self.config.threshold);
        Recalled {
            query: ask.query.text,
            lore,
            memories,
            episodic_bonus,
            took_ms: started.elapsed().as_secs_f64() * 1000.0,
            scene: Value::Null,
            scene_cached: false,
            skills: None,
        }
    }

    /// The memory event of a committed turn (seed 002 §7.1 step 7) and its vector.
    pub fn event_for(
        &self,
        state: &SessionState,
        result: &TurnResult,
        input: &PlayerInput,
        play_session: i64,
        fallback: bool,
    ) -> Option<(MemoryEvent, Option<Vec<f32>>)> {
        let event = memory_event(state, result, input, play_session, fallback)?;
        let vector = self.embed_one(&event.summary);
        Some((event, vector))
    }

    /// Keep a committed event (and its scene) in the in-memory index.
    pub fn remember(&mut self, event: MemoryEvent, vector: Option<Vec<f32>>, scene_id: &str) {
        self.branch.insert(scene_id.to_owned());
        self.memories.push(
            MemoryEvent {
                scene_id: scene_id.to_owned(),
                ..event
            },
            vector.as_deref(),
        );
    }
}

/// What a chunk is embedded as: its section and text.
fn embed_text(c: &crate::memory::Chunk) -> String {
    if c.section_path.is_empty() {
        c.text.clone()
    } else {
        format!("{}: {}", c.section_path, c.text)
    }
}

/// Seed 001's `SceneLoreCache`: what the narrator is told of a scene beside its history.
#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub struct SceneLore {
    pub location: String,
    pub location_name: String,
    /// The place's authored lore, first sentences.
    pub atmosphere: Vec<String>,
    /// Who is present, by id.
    pub npc_briefings: std::collections::BTreeMap<String, Briefing>,
    /// What lies at the place, and how the player finds it.
    pub discoverable: Vec<Discoverable>,
    /// How each open thread touches this place or these people, by thread id.
    pub thread_connections: std::collections::BTreeMap<String, String>,
}

/// One NPC present, as the scene lore briefs the narrator.
#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub struct Briefing {
    pub name: String,
    /// "warm toward the player", or empty.
    pub disposition: String,
    /// The public facts tied to them or to what they hold.
    pub knows: Vec<String>,
    /// Their role.
    pub capabilities: String,
}

/// A thing at the place the player may find.
#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub struct Discoverable {
    pub trigger: String,
    pub content: String,
}

/// Lore chunks that are prose of the world (not an NPC's sheet or secrets).
fn is_prose(c: &crate::memory::chunk::Chunk) -> bool {
    !matches!(c.meta.kind.as_str(), "npc" | "secret")
}

impl SessionMemory {
    /// Seed 001's `SceneLoreCache` for the scene the state is in, built from
    /// the campaign and world (no model): `atmosphere` (the place's authored
    /// lore, first sentences), `npc_briefings` (who is present: disposition
    /// toward the persona, role, what public facts they are tied to),
    /// `discoverable` (what lies at the place) and `thread_connections` (how
    /// open threads touch this place or these people).
    pub fn scene_brief(&self, state: &SessionState) -> SceneLore {
        let (location, location_name) = state.place();
        SceneLore {
            atmosphere: self.atmosphere(&location),
            npc_briefings: briefings(state),
            discoverable: discoverable(state, &location),
            thread_connections: self.thread_connections(state, &location),
            location,
            location_name,
        }
    }

    /// The first sentences of the place's authored lore.
    fn atmosphere(&self, location: &str) -> Vec<String> {
        self.lore
            .chunks
            .iter()
            .filter(|c| is_prose(c))
            .filter(|c| !location.is_empty() && c.meta.location_ids.iter().any(|l| l == location))
            .take(2)
            .map(|c| {
                crate::memory::chunk::sentences(&c.text)
                    .into_iter()
                    .take(2)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }

    /// For each open thread, the lore of this place or these people that
    /// shares the most words with it (at least two), else one tagged with it.
    fn thread_connections(
        &self,
        state: &SessionState,
        location: &str,
    ) -> std::collections::BTreeMap<String, String> {
        let present = present_ids(state);
        let mut threads = std::collections::BTreeMap::new();
        for t in state
            .world
            .threads
            .values()
            .filter(|t| t.status == "open" || t.status == "active")
        {
            let words: Vec<String> = format!("{} {}", t.title, t.stakes.as_str().unwrap_or(""))
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| w.len() >= 5)
                .map(str::to_lowercase)
                .collect();
            let here = |c: &&crate::memory::chunk::Chunk| {
                c.meta.location_ids.iter().any(|l| l == location)
                    || present
                        .iter()
                        .any(|p| p != PERSONA && c.meta.entity_ids.contains(p))
            };
            let best = self
                .lore
                .chunks
                .iter()
                .filter(|c| is_prose(c))
                .filter(here)
                .map(|c| {
                    let text = c.text.to_lowercase();
                    let shared = words.iter().filter(|w| text.contains(w.as_str())).count();
                    let tagged = usize::from(c.meta.thread_ids.contains(&t.id)) * 2;
                    (shared + tagged, c)
                })
                .filter(|(score, _)| *score >= 2)
                .max_by_key(|(score, _)| *score);
            if let Some((_, c)) = best {
                threads.insert(t.id.clone(), first_sentence(&c.text).to_owned());
            }
        }
        threads
    }
}

/// Who is present: disposition toward the persona, role, the public facts
/// tied to them or to what they hold.
fn briefings(state: &SessionState) -> std::collections::BTreeMap<String, Briefing> {
    let mut briefings = std::collections::BTreeMap::new();
    for id in present_ids(state)
        .iter()
        .filter(|id| id.as_str() != PERSONA)
    {
        let Some(ch) = state.campaign.characters.get(id) else {
            continue;
        };
        let held: Vec<&String> = state
            .world
            .inventory
            .get(id)
            .map(|i| i.keys().collect())
            .unwrap_or_default();
        let knows: Vec<String> = state
            .world
            .facts
            .iter()
            .filter(|f| f.visibility == crate::rules::state::Visibility::Public)
            .filter(|f| &f.subject == id || held.contains(&&f.subject))
            .map(|f| {
                format!(
                    "{} {}: {}",
                    f.subject.replace('_', " "),
                    f.predicate,
                    f.object
                )
            })
            .collect();
        let disposition = state
            .world
            .perception
            .get(id)
            .map(|p| format!("{} toward the player", crate::rules::standing::label(*p)))
            .unwrap_or_default();
        let capabilities = ch
            .profile
            .as_ref()
            .map(|p| p.role.clone())
            .unwrap_or_default();
        briefings.insert(
            id.clone(),
            Briefing {
                name: ch.name.clone(),
                disposition,
                knows,
                capabilities,
            },
        );
    }
    briefings
}

/// The campaign's items lying at `location`, as things to find.
fn discoverable(state: &SessionState, location: &str) -> Vec<Discoverable> {
    state
        .world
        .inventory
        .get(location)
        .into_iter()
        .flatten()
        .filter_map(|(item, _)| state.campaign.items.get(item))
        .map(|item| {
            let name = item.name.to_lowercase();
            let name = name.strip_prefix("the ").unwrap_or(&name);
            Discoverable {
                trigger: format!("look closely at the {name}"),
                content: item.description.clone(),
            }
        })
        .collect()
}

fn present_ids(state: &SessionState) -> Vec<String> {
    state.world.present()
}

fn first_sentence(text: &str) -> &str {
    crate::memory::chunk::sentences(text)
        .into_iter()
        .next()
        .unwrap_or("")
}

/// The memory event of a turn, in plain words: where, what the player tried
/// and how the dice went (in the second person, as the narrator addresses
/// them), then the narration's first sentence when it is grounded in the
/// scene, and what NPCs set out to do. Significance from the dice: a strong
/// success or a failure is high (and episodic when it also moved a clock or
/// a relation); a roll is medium; no roll is low.
pub fn memory_event(
    state: &SessionState,
    result: &TurnResult,
    input: &PlayerInput,
    play_session: i64,
    fallback: bool,
) -> Option<MemoryEvent> {
    let narration = result
        .messages
        .iter()
        .find(|m| m.kind == Kind::Narration && m.owner != PERSONA)
        .or_else(|| result.messages.iter().find(|m| m.kind == Kind::Narration))?;
    let (location, location_name) = state.place();
    let roll = result
        .rolls
        .iter()
        .find(|r| r.actor == PERSONA && r.against.is_none());
    let how = roll.map_or(String::new(), |r| format!(" ({})", r.label.to_lowercase()));
    let mut summary = format!(
        "At {location_name}, {TRIED}{}{how}.",
        verb_phrase(&input.text)
    );
    let names = campaign_names(&state.campaign);
    let told = first_sentence(&narration.content);
    if grounded(told, &names) {
        let _ = write!(summary, " {told}");
    }
    // What each NPC meant to do, by the same rule: its first sentence, when
    // it names someone or something of the campaign.
    for npc in &result.acted {
        if let Some(intention) = result
            .messages
            .iter()
            .find(|m| m.kind == Kind::Intention && &m.owner == npc)
            .map(|m| first_sentence(m.content.trim()))
            .filter(|told| grounded(told, &names))
        {
            let name = state
                .campaign
                .characters
                .get(npc)
                .map_or(npc.as_str(), |c| c.name.as_str());
            let _ = write!(summary, " {name}: {intention}");
        }
    }
    let mut characters = vec![PERSONA.to_owned()];
    for id in present_ids(state)
        .into_iter()
        .chain(result.acted.iter().cloned())
    {
        if !characters.contains(&id) {
            characters.push(id);
        }
    }
    let band = roll.map_or("", |r| r.band.as_str());
    let decisive = matches!(band, "success" | "critical" | "failure");
    let weighty = result
        .changes
        .iter()
        .any(|c| c.op.path.starts_with("clocks.") || c.op.path.starts_with("relations"));
    let significance = match (roll.is_some(), decisive) {
        (_, true) => Significance::High,
        (true, false) => Significance::Medium,
        (false, _) => Significance::Low,
    };
    Some(MemoryEvent {
        summary: summary.trim().to_owned(),
        characters,
        location,
        significance,
        episodic: decisive && weighty,
        action_type: if fallback { "fallback" } else { "action" }.into(),
        turn: state.turn_index + 1,
        play_session,
        scene_id: String::new(),
    })
}

#[cfg(test)]
mod tests {
    use crate::session::drafts::grounded;
    use crate::session::phrasing::verb_phrase;

    #[test]
    fn moves_read_in_the_second_person() {
        for (said, phrase) in [
            (
                "I ask Hesper about the page cut from my ledger.",
                "ask Hesper about the page cut from your ledger",
            ),
            (
                "Ask Tamsin to help me trim the wicks",
                "ask Tamsin to help you trim the wicks",
            ),
            (
                "I'm hiding behind the winch-house",
                "be hiding behind the winch-house",
            ),
            (
                "I'll light the lanterns myself",
                "light the lanterns yourself",
            ),
            ("Who cut the page?", "say \"Who cut the page?\""),
            (
                "Hesper, tell me the truth",
                "say \"Hesper, tell me the truth\"",
            ),
            ("\"Hands off the rail\"", "say \"Hands off the rail\""),
            // A choice cut off at a comma ends as a sentence does.
            (
                "Ask Hesper to walk behind you for the bridge,",
                "ask Hesper to walk behind you for the bridge",
            ),
            // A choice's question: the speech stays as typed, after a comma.
            (
                "Ask Bram Okafor: \"Can you help me find my brother?\"",
                "ask Bram Okafor, \"Can you help me find my brother?\"",
            ),
            (
                "I tell Hesper: \"My father knew. I saw it.\" and I wait",
                "tell Hesper, \"My father knew. I saw it.\" and you wait",
            ),
        ] {
            assert_eq!(verb_phrase(said), phrase, "{said}");
        }
    }

    #[test]
    fn only_sentences_about_the_scene_are_remembered() {
        let names = vec!["Hesper Vane".to_owned(), "The Ferry Patience".to_owned()];
        assert!(grounded(
            "Hesper turns the ledger away from the lamp.",
            &names
        ));
        assert!(!grounded(
            "The Northfields are a group of twenty islands.",
            &names
        ));
        assert!(!grounded("]} Hesper {\"role\": 1}", &names));
    }
}
