//! The compiled story graph: a story file with its ids, gates and overlays resolved.
//!
//! Ids are resolved to indices, gates to bitsets, and overlays pre-sorted for resolution.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use fixedbitset::FixedBitSet;
use indexmap::IndexMap;

use super::diagnostic::{Diagnostic, Rule, Subject};
use super::model::{CodexEntry, Entity, Overlay, Passage, Relationship, StoryFile};

macro_rules! index_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(u32);

        impl $name {
            /// The position in the story's list.
            pub fn index(self) -> usize {
                self.0 as usize
            }

            pub(crate) fn from_index(index: usize) -> Self {
                Self(u32::try_from(index).expect("story graphs hold fewer than 2^32 nodes"))
            }
        }
    };
}

index_type!(
    /// A passage, by its position in [`StoryFile::passages`].
    PassageIx
);
index_type!(
    /// A codeword, by its position in [`StoryFile::codewords`].
    CodewordIx
);
index_type!(
    /// An entity, by its position in [`StoryFile::entities`].
    EntityIx
);
index_type!(
    /// A codex tier, by its position in [`StoryFile::codex`].
    CodexIx
);

/// A set of codewords of one story.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct CodewordSet(FixedBitSet);

impl CodewordSet {
    /// An empty set able to hold every codeword of a story with `len` codewords.
    pub fn empty(len: usize) -> Self {
        Self(FixedBitSet::with_capacity(len))
    }

    pub fn insert(&mut self, codeword: CodewordIx) {
        self.0.insert(codeword.index());
    }

    pub fn remove(&mut self, codeword: CodewordIx) {
        self.0.set(codeword.index(), false);
    }

    pub fn contains(&self, codeword: CodewordIx) -> bool {
        self.0.contains(codeword.index())
    }

    pub fn is_subset(&self, other: &Self) -> bool {
        self.0.is_subset(&other.0)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_clear()
    }

    pub fn len(&self) -> usize {
        self.0.count_ones(..)
    }

    pub fn intersects(&self, other: &Self) -> bool {
        !self.0.is_disjoint(&other.0)
    }

    pub fn union_with(&mut self, other: &Self) {
        self.0.union_with(&other.0);
    }

    pub fn intersect_with(&mut self, other: &Self) {
        self.0.intersect_with(&other.0);
    }

    /// Members of `self` not in `other`.
    pub fn difference(&self, other: &Self) -> Self {
        let mut out = self.clone();
        out.0.difference_with(&other.0);
        out
    }

    pub fn iter(&self) -> impl Iterator<Item = CodewordIx> + '_ {
        self.0.ones().map(CodewordIx::from_index)
    }
}

/// A compiled Choice edge.
#[derive(Clone, Debug)]
pub struct ChoiceNode {
    pub to: PassageIx,
    pub requires: CodewordSet,
    pub grants: CodewordSet,
}

/// An overlay with its gate as a bitset, in resolution order.
#[derive(Clone, Debug)]
struct CompiledOverlay {
    /// Index into the source `overlays` list.
    source: usize,
    when: CodewordSet,
}

/// Base details plus overlays sorted so that applying them in order lets the
/// most specific (then the later) overlay win, as seed 000's State Pattern says.
#[derive(Clone, Debug)]
pub(crate) struct ConditionalState {
    overlays: Vec<CompiledOverlay>,
}

impl ConditionalState {
    fn compile(overlays: &[Overlay], mut gate: impl FnMut(&[String]) -> CodewordSet) -> Self {
        let mut compiled: Vec<CompiledOverlay> = overlays
            .iter()
            .enumerate()
            .map(|(source, overlay)| CompiledOverlay {
                source,
                when: gate(&overlay.when),
            })
            .collect();
        compiled.sort_by_key(|o| (o.when.len(), o.source));
        Self { overlays: compiled }
    }

    /// Base details with every applicable overlay merged in.
    #[expect(
        clippy::indexing_slicing,
        reason = "typed indices are made by `Story::compile` for this story's own lists"
    )]
    pub(crate) fn resolve<'a>(
        &self,
        base: &'a IndexMap<String, String>,
        overlays: &'a [Overlay],
        held: &CodewordSet,
    ) -> IndexMap<&'a str, &'a str> {
        let mut out: IndexMap<&str, &str> =
            base.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        for overlay in self.overlays.iter().filter(|o| o.when.is_subset(held)) {
            for (k, v) in &overlays[overlay.source].details {
                out.insert(k.as_str(), v.as_str());
            }
        }
        out
    }
}

/// A story ready to play and check: every reference resolved.
#[derive(Debug)]
pub struct Story {
    file: StoryFile,
    start: PassageIx,
    passage_ix: HashMap<String, PassageIx>,
    codeword_ix: HashMap<String, CodewordIx>,
    entity_ix: HashMap<String, EntityIx>,
    choices: Vec<Vec<ChoiceNode>>,
    /// Flat numbering of choices: `choice_offset[p] + i`.
    choice_offset: Vec<usize>,
    entity_states: Vec<ConditionalState>,
    relationship_states: Vec<ConditionalState>,
    codex_gates: Vec<CodewordSet>,
    codex_entity: Vec<EntityIx>,
    /// Codex tiers of each entity, sorted by rank then file order.
    codex_by_entity: Vec<Vec<CodexIx>>,
    illustrations_by_passage: Vec<Vec<usize>>,
}

/// Index of unique ids, recording duplicates as diagnostics.
fn index_ids<'a, T: Copy>(
    ids: impl Iterator<Item = &'a str>,
    make: impl Fn(usize) -> T,
    subject: impl Fn(String) -> Subject,
    diagnostics: &mut Vec<Diagnostic>,
) -> HashMap<String, T> {
    let mut map = HashMap::new();
    for (i, id) in ids.enumerate() {
        if map.insert(id.to_owned(), make(i)).is_some() {
            diagnostics.push(Diagnostic::new(
                Rule::DuplicateId,
                subject(id.to_owned()),
                "the id is used more than once; ids must be unique within their kind",
            ));
        }
    }
    map
}

/// The most memory a story's codeword sets may take when it is compiled.
pub const COMPILE_BUDGET: usize = 64 << 20;

impl Story {
    /// Resolve every reference of a story file. Fails with every broken
    /// reference at once (unknown ids, duplicates, no start).
    #[expect(
        clippy::too_many_lines,
        reason = "a linear mapping: the story file compiled field by field into the graph, \
                  every broken reference gathered in one list of diagnostics"
    )]
    #[expect(
        clippy::indexing_slicing,
        reason = "typed indices are made by `Story::compile` for this story's own lists"
    )]
    pub fn compile(file: StoryFile) -> Result<Self, Vec<Diagnostic>> {
        let mut diags = Vec::new();
        // Every gate, grant, overlay and (for the checker) passage holds a set
        // over all codewords: a story whose sets would not fit the budget is
        // refused here, before they are made (#44: 60,000 codewords on 60,000
        // choices would be gigabytes).
        let sets = file.passages.len()
            + 2 * file.passages.iter().map(|p| p.choices.len()).sum::<usize>()
            + file
                .entities
                .iter()
                .map(|e| e.overlays.len())
                .sum::<usize>()
            + file.codex.len();
        let bytes = sets.saturating_mul(file.codewords.len().div_ceil(8));
        if bytes > COMPILE_BUDGET {
            return Err(vec![Diagnostic::new(
                Rule::StateSpaceTooLarge,
                Subject::Story,
                format!(
                    "too large to open: {} codewords over {} passages and choices would take {} MiB to track (at most {} MiB); split the story or use fewer codewords",
                    file.codewords.len(),
                    sets,
                    bytes >> 20,
                    COMPILE_BUDGET >> 20
                ),
            )]);
        }
        let passage_ix = index_ids(
            file.passages.iter().map(|p| p.id.as_str()),
            PassageIx::from_index,
            Subject::Passage,
            &mut diags,
        );
        let codeword_ix = index_ids(
            file.codewords.iter().map(|c| c.id.as_str()),
            CodewordIx::from_index,
            Subject::Codeword,
            &mut diags,
        );
        let entity_ix = index_ids(
            file.entities.iter().map(|e| e.id.as_str()),
            EntityIx::from_index,
            Subject::Entity,
            &mut diags,
        );
        let (relationship_ids, scene_ids) = index_other_ids(&file, &mut diags);
        let n_codewords = file.codewords.len();
        let gate = |ids: &[String], subject: &dyn Fn() -> Subject, diags: &mut Vec<Diagnostic>| {
            let mut set = CodewordSet::empty(n_codewords);
            for id in ids {
                match codeword_ix.get(id) {
                    Some(&ix) => set.insert(ix),
                    None => diags.push(Diagnostic::new(
                        Rule::UnknownCodeword,
                        subject(),
                        format!("`{id}` is not a declared codeword"),
                    )),
                }
            }
            set
        };

        let mut choices = Vec::with_capacity(file.passages.len());
        let mut choice_offset = Vec::with_capacity(file.passages.len());
        let mut has_incoming = vec![false; file.passages.len()];
        let mut total = 0;
        for passage in &file.passages {
            choice_offset.push(total);
            total += passage.choices.len();
            let mut nodes = Vec::with_capacity(passage.choices.len());
            for (index, choice) in passage.choices.iter().enumerate() {
                let subject = || Subject::Choice {
                    passage: passage.id.clone(),
                    index,
                };
                let requires = gate(&choice.requires, &subject, &mut diags);
                let grants = gate(&choice.grants, &subject, &mut diags);
                match passage_ix.get(&choice.to) {
                    Some(&to) => {
                        has_incoming[to.index()] = true;
                        nodes.push(ChoiceNode {
                            to,
                            requires,
                            grants,
                        });
                    }
                    None => diags.push(Diagnostic::new(
                        Rule::UnknownPassage,
                        subject(),
                        format!("leads to `{}`, which is not a passage", choice.to),
                    )),
                }
            }
            check_passage_refs(
                passage,
                &entity_ix,
                &relationship_ids,
                &scene_ids,
                &mut diags,
            );
            choices.push(nodes);
        }

        let entity_states = file
            .entities
            .iter()
            .map(|e: &Entity| {
                ConditionalState::compile(&e.overlays, |when| {
                    gate(when, &|| Subject::Entity(e.id.clone()), &mut diags)
                })
            })
            .collect();
        let relationship_states = file
            .relationships
            .iter()
            .map(|r: &Relationship| {
                for end in [&r.from, &r.to] {
                    if !entity_ix.contains_key(end) {
                        diags.push(Diagnostic::new(
                            Rule::UnknownEntity,
                            Subject::Relationship(r.id.clone()),
                            format!("connects `{end}`, which is not an entity"),
                        ));
                    }
                }
                ConditionalState::compile(&r.overlays, |when| {
                    gate(when, &|| Subject::Relationship(r.id.clone()), &mut diags)
                })
            })
            .collect();

        let codex_gates: Vec<CodewordSet> = file
            .codex
            .iter()
            .map(|entry| {
                gate(
                    &entry.visible_when,
                    &|| Subject::Codex(entry.id.clone()),
                    &mut diags,
                )
            })
            .collect();
        let (codex_entity, codex_by_entity) = index_codex(&file, &entity_ix, &mut diags);
        let illustrations_by_passage = index_illustrations(&file, &passage_ix, &mut diags);

        let start = resolve_start(&file, &passage_ix, &has_incoming, &mut diags);
        match start {
            Some(start) if diags.is_empty() => Ok(Self {
                file,
                start,
                passage_ix,
                codeword_ix,
                entity_ix,
                choices,
                choice_offset,
                entity_states,
                relationship_states,
                codex_gates,
                codex_entity,
                codex_by_entity,
                illustrations_by_passage,
            }),
            _ => Err(diags),
        }
    }

    /// The source document.
    pub fn file(&self) -> &StoryFile {
        &self.file
    }

    pub fn title(&self) -> &str {
        &self.file.meta.title
    }

    pub fn start(&self) -> PassageIx {
        self.start
    }

    pub fn passage_count(&self) -> usize {
        self.file.passages.len()
    }

    pub fn codeword_count(&self) -> usize {
        self.file.codewords.len()
    }

    pub fn choice_count(&self) -> usize {
        self.choices.iter().map(Vec::len).sum()
    }

    #[expect(
        clippy::indexing_slicing,
        reason = "typed indices are made by `Story::compile` for this story's own lists"
    )]
    pub fn passage(&self, p: PassageIx) -> &Passage {
        &self.file.passages[p.index()]
    }

    pub fn passage_ix(&self, id: &str) -> Option<PassageIx> {
        self.passage_ix.get(id).copied()
    }

    pub fn passages(&self) -> impl Iterator<Item = PassageIx> + use<> {
        (0..self.file.passages.len()).map(PassageIx::from_index)
    }

    /// Compiled choices of a passage, in the author's order.
    #[expect(
        clippy::indexing_slicing,
        reason = "typed indices are made by `Story::compile` for this story's own lists"
    )]
    pub fn choices(&self, p: PassageIx) -> &[ChoiceNode] {
        &self.choices[p.index()]
    }

    /// A number unique to each choice of the story, for per-choice bitsets.
    #[expect(
        clippy::indexing_slicing,
        reason = "typed indices are made by `Story::compile` for this story's own lists"
    )]
    pub fn choice_number(&self, p: PassageIx, index: usize) -> usize {
        self.choice_offset[p.index()] + index
    }

    /// An ending is a passage without outgoing choices.
    #[expect(
        clippy::indexing_slicing,
        reason = "typed indices are made by `Story::compile` for this story's own lists"
    )]
    pub fn is_ending(&self, p: PassageIx) -> bool {
        self.file.passages[p.index()].choices.is_empty()
    }

    /// Every codeword some choice grants.
    pub fn granted_anywhere(&self) -> CodewordSet {
        self.union_over_choices(|c| &c.grants)
    }

    /// Every codeword some choice requires.
    pub fn required_anywhere(&self) -> CodewordSet {
        self.union_over_choices(|c| &c.requires)
    }

    fn union_over_choices(&self, part: impl Fn(&ChoiceNode) -> &CodewordSet) -> CodewordSet {
        let mut out = self.no_codewords();
        for choice in self.choices.iter().flatten() {
            out.union_with(part(choice));
        }
        out
    }

    pub fn codeword_ix(&self, id: &str) -> Option<CodewordIx> {
        self.codeword_ix.get(id).copied()
    }

    #[expect(
        clippy::indexing_slicing,
        reason = "typed indices are made by `Story::compile` for this story's own lists"
    )]
    pub fn codeword_id(&self, c: CodewordIx) -> &str {
        &self.file.codewords[c.index()].id
    }

    /// Resolve codeword ids; `None` if any is unknown.
    pub fn codeword_set<'a>(&self, ids: impl IntoIterator<Item = &'a str>) -> Option<CodewordSet> {
        let mut set = self.no_codewords();
        for id in ids {
            set.insert(self.codeword_ix(id)?);
        }
        Some(set)
    }

    pub fn no_codewords(&self) -> CodewordSet {
        CodewordSet::empty(self.file.codewords.len())
    }

    pub fn entity_ix(&self, id: &str) -> Option<EntityIx> {
        self.entity_ix.get(id).copied()
    }

    #[expect(
        clippy::indexing_slicing,
        reason = "typed indices are made by `Story::compile` for this story's own lists"
    )]
    pub fn entity(&self, e: EntityIx) -> &Entity {
        &self.file.entities[e.index()]
    }

    pub fn entities(&self) -> impl Iterator<Item = EntityIx> + use<> {
        (0..self.file.entities.len()).map(EntityIx::from_index)
    }

    /// An entity's details under the held codewords (base + applicable overlays).
    #[expect(
        clippy::indexing_slicing,
        reason = "typed indices are made by `Story::compile` for this story's own lists"
    )]
    pub fn entity_state(&self, e: EntityIx, held: &CodewordSet) -> IndexMap<&str, &str> {
        let entity = &self.file.entities[e.index()];
        self.entity_states[e.index()].resolve(&entity.base, &entity.overlays, held)
    }

    /// A relationship's details under the held codewords.
    #[expect(
        clippy::indexing_slicing,
        reason = "typed indices are made by `Story::compile` for this story's own lists"
    )]
    pub fn relationship_state(&self, r: usize, held: &CodewordSet) -> IndexMap<&str, &str> {
        let rel = &self.file.relationships[r];
        self.relationship_states[r].resolve(&rel.base, &rel.overlays, held)
    }

    #[expect(
        clippy::indexing_slicing,
        reason = "typed indices are made by `Story::compile` for this story's own lists"
    )]
    pub fn codex_entry(&self, c: CodexIx) -> &CodexEntry {
        &self.file.codex[c.index()]
    }

    #[expect(
        clippy::indexing_slicing,
        reason = "typed indices are made by `Story::compile` for this story's own lists"
    )]
    pub fn codex_entity(&self, c: CodexIx) -> EntityIx {
        self.codex_entity[c.index()]
    }

    #[expect(
        clippy::indexing_slicing,
        reason = "typed indices are made by `Story::compile` for this story's own lists"
    )]
    pub fn codex_gate(&self, c: CodexIx) -> &CodewordSet {
        &self.codex_gates[c.index()]
    }

    /// Codex tiers of an entity by rank, unlocked or not.
    #[expect(
        clippy::indexing_slicing,
        reason = "typed indices are made by `Story::compile` for this story's own lists"
    )]
    pub fn codex_tiers(&self, e: EntityIx) -> &[CodexIx] {
        &self.codex_by_entity[e.index()]
    }

    /// Illustrations shown with a passage (indices into `file().illustrations`).
    #[expect(
        clippy::indexing_slicing,
        reason = "typed indices are made by `Story::compile` for this story's own lists"
    )]
    pub fn illustrations(&self, p: PassageIx) -> &[usize] {
        &self.illustrations_by_passage[p.index()]
    }
}

/// Ids of relationships and scenes (for references), checking codex and illustration ids too.
fn index_other_ids(
    file: &StoryFile,
    diags: &mut Vec<Diagnostic>,
) -> (HashMap<String, usize>, HashMap<String, usize>) {
    let relationships = index_ids(
        file.relationships.iter().map(|r| r.id.as_str()),
        |i| i,
        Subject::Relationship,
        diags,
    );
    let scenes = index_ids(
        file.scenes.iter().map(|s| s.id.as_str()),
        |i| i,
        Subject::Scene,
        diags,
    );
    index_ids(
        file.codex.iter().map(|c| c.id.as_str()),
        |i| i,
        Subject::Codex,
        diags,
    );
    index_ids(
        file.illustrations.iter().map(|c| c.id.as_str()),
        |i| i,
        Subject::Illustration,
        diags,
    );
    (relationships, scenes)
}

/// Each codex tier's entity, and each entity's tiers sorted by rank then file order.
#[expect(
    clippy::indexing_slicing,
    reason = "typed indices are made by `Story::compile` for this story's own lists"
)]
fn index_codex(
    file: &StoryFile,
    entity_ix: &HashMap<String, EntityIx>,
    diags: &mut Vec<Diagnostic>,
) -> (Vec<EntityIx>, Vec<Vec<CodexIx>>) {
    let mut codex_entity = Vec::with_capacity(file.codex.len());
    let mut codex_by_entity = vec![Vec::new(); file.entities.len()];
    for (i, entry) in file.codex.iter().enumerate() {
        if let Some(&e) = entity_ix.get(&entry.entity) {
            codex_entity.push(e);
            codex_by_entity[e.index()].push(CodexIx::from_index(i));
        } else {
            codex_entity.push(EntityIx(0));
            diags.push(Diagnostic::new(
                Rule::UnknownEntity,
                Subject::Codex(entry.id.clone()),
                format!("describes `{}`, which is not an entity", entry.entity),
            ));
        }
    }
    for tiers in &mut codex_by_entity {
        tiers.sort_by_key(|&c| (file.codex[c.index()].rank, c.index()));
    }
    (codex_entity, codex_by_entity)
}

/// Illustrations per passage, from their Depicts edges.
#[expect(
    clippy::indexing_slicing,
    reason = "typed indices are made by `Story::compile` for this story's own lists"
)]
fn index_illustrations(
    file: &StoryFile,
    passage_ix: &HashMap<String, PassageIx>,
    diags: &mut Vec<Diagnostic>,
) -> Vec<Vec<usize>> {
    let mut by_passage = vec![Vec::new(); file.passages.len()];
    for (i, art) in file.illustrations.iter().enumerate() {
        for passage in &art.depicts {
            match passage_ix.get(passage) {
                Some(&p) => by_passage[p.index()].push(i),
                None => diags.push(Diagnostic::new(
                    Rule::UnknownPassage,
                    Subject::Illustration(art.id.clone()),
                    format!("depicts `{passage}`, which is not a passage"),
                )),
            }
        }
    }
    by_passage
}

fn check_passage_refs(
    passage: &Passage,
    entities: &HashMap<String, EntityIx>,
    relationships: &HashMap<String, usize>,
    scenes: &HashMap<String, usize>,
    diags: &mut Vec<Diagnostic>,
) {
    let subject = || Subject::Passage(passage.id.clone());
    for appearance in &passage.appears {
        if !entities.contains_key(&appearance.entity) {
            diags.push(Diagnostic::new(
                Rule::UnknownEntity,
                subject(),
                format!("`{}` appears here but is not an entity", appearance.entity),
            ));
        }
    }
    for rel in &passage.involves {
        if !relationships.contains_key(rel) {
            diags.push(Diagnostic::new(
                Rule::UnknownRelationship,
                subject(),
                format!("involves `{rel}`, which is not a relationship"),
            ));
        }
    }
    if let Some(scene) = &passage.scene
        && !scenes.contains_key(scene)
    {
        diags.push(Diagnostic::new(
            Rule::UnknownScene,
            subject(),
            format!("belongs to scene `{scene}`, which is not declared"),
        ));
    }
}

fn resolve_start(
    file: &StoryFile,
    passage_ix: &HashMap<String, PassageIx>,
    has_incoming: &[bool],
    diags: &mut Vec<Diagnostic>,
) -> Option<PassageIx> {
    if let Some(start) = &file.start {
        let found = passage_ix.get(start).copied();
        if found.is_none() {
            diags.push(Diagnostic::new(
                Rule::NoStart,
                Subject::Story,
                format!("`start` names `{start}`, which is not a passage"),
            ));
        }
        return found;
    }
    let roots: Vec<&str> = file
        .passages
        .iter()
        .zip(has_incoming)
        .filter(|(_, incoming)| !**incoming)
        .map(|(p, _)| p.id.as_str())
        .collect();
    match roots.as_slice() {
        [one] => passage_ix.get(*one).copied(),
        [] => {
            diags.push(Diagnostic::new(
                Rule::NoStart,
                Subject::Story,
                "every passage has an incoming choice, so none is the start; set `start`",
            ));
            None
        }
        many => {
            let unique: HashSet<&str> = many.iter().copied().collect();
            let mut names: Vec<&str> = unique.into_iter().collect();
            names.sort_unstable();
            diags.push(Diagnostic::new(
                Rule::AmbiguousStart,
                Subject::Story,
                format!(
                    "{} passages have no incoming choice ({}); set `start` to the first one",
                    names.len(),
                    names.join(", ")
                ),
            ));
            None
        }
    }
}

/// A compiled story shared between the player, the engine and tools.
pub type SharedStory = Arc<Story>;
