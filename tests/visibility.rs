//! Seed 004's visibility matrix, exhaustively, over a two-turn stream.
//!
//! For every stage, exactly which messages of the stream it sees (and so which it does not).

use loreloom::transcript::stream::{NARRATOR, SYSTEM};
use loreloom::transcript::{
    Kind, MessageId, Stage, StateEntry, Stream, player_view, states_for, view,
};
use serde_json::json;

/// Two turns: a scene marker, the persona's thought + intention, narration, an
/// extractor note, then NPCs `ada` (thought + intention) and `bo` (a whisper to
/// ada), each narrated; turn 2 repeats the persona and ada.
fn stream() -> (Stream, Ids) {
    let mut s = Stream::default();
    let t = 1;
    let marker = s.push(
        t,
        SYSTEM,
        Kind::SceneMarker,
        "t1 marker: scene_open quay",
        None,
    );
    let _ = s.push(t, "player", Kind::Thought, "t1 player thought", None);
    let p1 = s.push(t, "player", Kind::Intention, "t1 player intention", None);
    let n1 = s.push(t, NARRATOR, Kind::Narration, "t1 narration of player", None);
    let _ = s.push(t, SYSTEM, Kind::System, "t1 persona extractor note", None);
    let _ = s.push(t, "ada", Kind::Thought, "t1 ada thought", None);
    let a1 = s.push(t, "ada", Kind::Intention, "t1 ada intention", None);
    let n2 = s.push(t, NARRATOR, Kind::Narration, "t1 narration of ada", None);
    let _ = s.push(t, "bo", Kind::Thought, "t1 bo thought", None);
    let b1 = s.push(
        t,
        "bo",
        Kind::Intention,
        "t1 bo whisper",
        Some("ada".into()),
    );
    let _ = s.push(t, NARRATOR, Kind::Narration, "t1 narration of bo", None);
    let t = s.next_turn();
    assert_eq!(t, 2);
    let _ = s.push(t, "player", Kind::Thought, "t2 player thought", None);
    let p2 = s.push(t, "player", Kind::Intention, "t2 player intention", None);
    let n4 = s.push(t, NARRATOR, Kind::Narration, "t2 narration of player", None);
    let _ = s.push(t, "ada", Kind::Thought, "t2 ada thought", None);
    let a2 = s.push(t, "ada", Kind::Intention, "t2 ada intention", None);
    let _ = s.push(t, NARRATOR, Kind::Narration, "t2 narration of ada", None);
    let _ = marker;
    (
        s,
        Ids {
            p1,
            n1,
            a1,
            n2,
            b1,
            p2,
            n4,
            a2,
        },
    )
}

struct Ids {
    p1: MessageId,
    n1: MessageId,
    a1: MessageId,
    n2: MessageId,
    b1: MessageId,
    p2: MessageId,
    n4: MessageId,
    a2: MessageId,
}

fn seen(s: &Stream, stage: &Stage) -> Vec<String> {
    view(&s.messages, stage)
        .into_iter()
        .map(|m| m.content.clone())
        .collect()
}

#[test]
fn turn_ids_and_sequences_are_assigned_by_the_stream() {
    let (s, ids) = stream();
    assert_eq!(ids.p1, MessageId { turn_id: 1, seq: 3 });
    assert_eq!(ids.p2, MessageId { turn_id: 2, seq: 2 });
    assert!(
        s.messages.windows(2).all(|w| w[0].id < w[1].id),
        "strictly ordered"
    );
}

#[test]
fn persona_intent_sees_all_narration_and_only_its_own_intentions_and_thoughts() {
    let (s, _) = stream();
    assert_eq!(
        seen(
            &s,
            &Stage::PersonaIntent {
                persona: "player".into()
            }
        ),
        [
            "t1 player thought",
            "t1 player intention",
            "t1 narration of player",
            "t1 narration of ada",
            "t1 narration of bo",
            "t2 player thought",
            "t2 player intention",
            "t2 narration of player",
            "t2 narration of ada",
        ]
    );
}

#[test]
fn an_npc_never_sees_another_characters_intentions_or_thoughts() {
    let (s, _) = stream();
    assert_eq!(
        seen(&s, &Stage::NpcIntent { npc: "ada".into() }),
        [
            "t1 narration of player",
            "t1 ada thought",
            "t1 ada intention",
            "t1 narration of ada",
            "t1 narration of bo",
            "t2 narration of player",
            "t2 ada thought",
            "t2 ada intention",
            "t2 narration of ada",
        ],
        "not even bo's whisper addressed to ada"
    );
    assert_eq!(
        seen(&s, &Stage::NpcIntent { npc: "bo".into() }),
        [
            "t1 narration of player",
            "t1 narration of ada",
            "t1 bo thought",
            "t1 bo whisper",
            "t1 narration of bo",
            "t2 narration of player",
            "t2 narration of ada",
        ]
    );
}

#[test]
fn the_narrator_sees_markers_past_narration_and_exactly_the_intention_it_resolves() {
    let (s, ids) = stream();
    assert_eq!(
        seen(&s, &Stage::Narrator { resolving: ids.p1 }),
        ["t1 marker: scene_open quay", "t1 player intention"]
    );
    assert_eq!(
        seen(&s, &Stage::Narrator { resolving: ids.b1 }),
        [
            "t1 marker: scene_open quay",
            "t1 narration of player",
            "t1 narration of ada",
            "t1 bo whisper",
        ],
        "the narrator sees a whisper it resolves"
    );
    assert_eq!(
        seen(&s, &Stage::Narrator { resolving: ids.a2 }),
        [
            "t1 marker: scene_open quay",
            "t1 narration of player",
            "t1 narration of ada",
            "t1 narration of bo",
            "t2 narration of player",
            "t2 ada intention",
        ]
    );
}

#[test]
fn extractors_see_past_narration_their_last_own_intention_and_own_thoughts() {
    let (s, ids) = stream();
    assert_eq!(
        seen(
            &s,
            &Stage::PersonaExtractor {
                persona: "player".into(),
                intention: ids.p2
            }
        ),
        [
            "t1 player thought",
            "t1 narration of player",
            "t1 narration of ada",
            "t1 narration of bo",
            "t2 player thought",
            "t2 player intention",
        ],
        "not t1's intention, not the narration of t2's"
    );
    assert_eq!(
        seen(
            &s,
            &Stage::CharacterExtractor {
                npc: "ada".into(),
                intention: ids.a1
            }
        ),
        [
            "t1 narration of player",
            "t1 ada thought",
            "t1 ada intention",
        ]
    );
}

#[test]
fn the_lore_extractor_sees_only_the_new_narration() {
    let (s, ids) = stream();
    for n in [ids.n1, ids.n2, ids.n4] {
        let got = view(&s.messages, &Stage::LoreExtractor { narration: n });
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].id, n);
        assert_eq!(got[0].kind, Kind::Narration);
    }
}

#[test]
fn no_stage_ever_sees_system_messages_or_anothers_thoughts() {
    let (s, ids) = stream();
    let stages = [
        Stage::PersonaIntent {
            persona: "player".into(),
        },
        Stage::NpcIntent { npc: "ada".into() },
        Stage::NpcIntent { npc: "bo".into() },
        Stage::Narrator { resolving: ids.p1 },
        Stage::Narrator { resolving: ids.a2 },
        Stage::PersonaExtractor {
            persona: "player".into(),
            intention: ids.p1,
        },
        Stage::CharacterExtractor {
            npc: "bo".into(),
            intention: ids.b1,
        },
        Stage::LoreExtractor { narration: ids.n2 },
    ];
    for stage in &stages {
        let me = match stage {
            Stage::PersonaIntent { persona } | Stage::PersonaExtractor { persona, .. } => {
                Some(persona.as_str())
            }
            Stage::NpcIntent { npc } | Stage::CharacterExtractor { npc, .. } => Some(npc.as_str()),
            _ => None,
        };
        for m in view(&s.messages, stage) {
            assert_ne!(m.kind, Kind::System, "{stage:?}");
            if m.kind == Kind::Thought {
                assert_eq!(Some(m.owner.as_str()), me, "{stage:?} saw {m:?}");
            }
        }
    }
}

#[test]
fn the_player_reads_narration_and_their_own_mind_and_every_intention_only_in_debug() {
    let (s, _) = stream();
    let normal: Vec<&str> = player_view(&s.messages, "player", false)
        .into_iter()
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(
        normal,
        [
            "t1 player thought",
            "t1 player intention",
            "t1 narration of player",
            "t1 narration of ada",
            "t1 narration of bo",
            "t2 player thought",
            "t2 player intention",
            "t2 narration of player",
            "t2 narration of ada",
        ]
    );
    let debug = player_view(&s.messages, "player", true);
    assert!(debug.iter().any(|m| m.content == "t1 bo whisper"));
    assert!(
        !debug
            .iter()
            .any(|m| m.kind == Kind::Thought && m.owner != "player")
    );
    assert!(
        !debug
            .iter()
            .any(|m| matches!(m.kind, Kind::System | Kind::SceneMarker))
    );
}

#[test]
fn latent_states_reach_extractors_only() {
    let states = [
        StateEntry {
            name: "rage".into(),
            value: json!("building"),
            level: 3,
        },
        StateEntry {
            name: "wounded".into(),
            value: json!(true),
            level: 6,
        },
    ];
    let id = MessageId { turn_id: 1, seq: 1 };
    let names = |stage: Stage| -> Vec<String> {
        states_for(&stage, &states)
            .iter()
            .map(|s| s.name.clone())
            .collect()
    };
    assert_eq!(names(Stage::NpcIntent { npc: "ada".into() }), ["wounded"]);
    assert_eq!(
        names(Stage::PersonaIntent {
            persona: "player".into()
        }),
        ["wounded"]
    );
    assert_eq!(names(Stage::Narrator { resolving: id }), ["wounded"]);
    assert_eq!(
        names(Stage::CharacterExtractor {
            npc: "ada".into(),
            intention: id
        }),
        ["rage", "wounded"]
    );
    assert_eq!(
        names(Stage::PersonaExtractor {
            persona: "player".into(),
            intention: id
        }),
        ["rage", "wounded"]
    );
}
