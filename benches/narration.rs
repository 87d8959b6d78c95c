//! Whether the narrator uses what happened, with the real model's narrations in both prompt forms.
//!
//! Does the narrator use what happened? A Drowned Reach session whose player narrations (as
//! committed, after the cut of recited prompt lines and the choice among drafts) come from the real
//! default model (every other stage scripted, real `MiniLM` recall), played once with the full
//! narrator prompt and once with the compact one: the share of narrations that read as prose, stay
//! in the scene, call back to the recalled memory or to the lore shown, and slip into
//! chat-assistant talk.
//!
//! `cargo bench --bench narration` (`FORMS=compact` or `FORMS=full` plays one form; `DRAFTS=n`
//! overrides the model's drafts).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use loreloom::llm::backend::Backend;
use loreloom::llm::open_backend;
use loreloom::llm::{Gateway, ModelsConfig, PromptRegistry, Script, ScriptedBackend};
use loreloom::session::controller::{Controller, Report, Step};
use loreloom::session::drafts::{Cues, judge};
use loreloom::session::phrasing::{brief, verb_phrase};
use loreloom::session::play::run_turn;
use loreloom::session::save_files::{NewSave, create_save};
use loreloom::session::turn::Calibration;
use loreloom::transcript::stream::Kind;

#[allow(dead_code)]
#[path = "../tests/common/scripted.rs"]
mod scripted;

#[path = "common/router.rs"]
mod router;
use router::Router;

/// Whether `text` (a narrator prompt) narrates the player's `action`, in the full form or the compact one.
fn narrates(text: &str, action: &str) -> bool {
    !action.is_empty()
        && (text.contains(&format!("tries: {action}"))
            || text.contains(&format!("you {}", verb_phrase(action))))
}

/// Moves that come back to earlier ones, so there is something to remember.
const ACTIONS: [&str; 8] = [
    "I ask Hesper about the page cut from the crossing ledger",
    "I ask Tamsin where she gets the lamp oil",
    "I search the toll house for the missing ledger page",
    "I ask Hesper again who cut the ledger page",
    "I watch Ned Fallow trim the wicks of the green lanterns",
    "I ask Tamsin again about the lamp oil and its colour",
    "I show Hesper what I found in the toll house",
    "I ask Ned why the lanterns burn green",
];

#[derive(Default)]
struct Tally {
    narrations: usize,
    prose: usize,
    grounded: usize,
    with_memory: usize,
    callbacks: usize,
    with_lore: usize,
    lore_callbacks: usize,
    assistant: usize,
    first_person: usize,
    time: Duration,
    prompt_chars: usize,
}

fn play(compact: bool, turns: usize) -> Tally {
    let key = if compact {
        "router-compact"
    } else {
        "router-full"
    };
    let dir = tempfile::tempdir().expect("a temp dir");
    let save = dir.path().join("narration.db");
    create_narration_save(&save, key);
    let action = Arc::new(Mutex::new(String::new()));
    let gateway = router_gateway(key, turns, action.clone());
    let mut ctl = Controller::open(&save).expect("the save opens");
    assert!(
        ctl.memory.has_embedder(),
        "./run.sh test installs the embedder"
    );
    let mut tally = Tally::default();
    for n in 0..turns {
        let line = ACTIONS[n % ACTIONS.len()];
        if let Ok(mut a) = action.lock() {
            line.clone_into(&mut a);
        }
        let Step::Run(input) = ctl.handle(line) else {
            continue;
        };
        let recalled = ctl.state.recalled.memories.first().cloned();
        let lore = ctl.state.recalled.lore.first().cloned();
        let result = run_turn(&gateway, ctl.state.clone(), input.clone(), |_| {});
        if let Err(e) = &result {
            println!("{key} turn {n}: failed: {e}");
        }
        let Ok(result) = result else {
            let _ = ctl.finish(&input, result);
            continue;
        };
        let record = result.records.iter().find(|r| {
            r.stage == "narrate"
                && r.first()
                    .is_some_and(|a| a.messages.iter().any(|m| narrates(&m.content, line)))
        });
        let Some(record) = record else {
            println!("{key} turn {n}: no player narration");
            let _ = ctl.finish(&input, Ok(result));
            continue;
        };
        // What the player reads: the committed narration (after the cut of
        // any recited prompt lines and the choice among drafts), the turn's
        // first, as the player's move is narrated before anyone else's.
        let text = result
            .messages
            .iter()
            .find(|m| m.kind == Kind::Narration)
            .map_or_else(String::new, |m| m.content.clone());
        tally.narrations += 1;
        tally.time += record.total;
        tally.prompt_chars += record
            .first()
            .map_or(0, |a| a.messages.iter().map(|m| m.content.len()).sum());
        // Judged as the turn judges drafts: against the memory and lore the
        // prompt was shown, less the words of the move and the campaign's
        // names and everyday words.
        let memory = recalled
            .as_ref()
            .map_or_else(String::new, |m| brief(&m.summary, 1, 240));
        let lore_brief = lore
            .as_ref()
            .map_or_else(String::new, |h| brief(&h.text, 2, 240));
        let said_anyway = format!("{line} {}", ctl.state.place().1);
        let cues = Cues::new(&ctl.state.campaign, &memory, &lore_brief, &said_anyway);
        let v = judge(&text, false, &cues);
        tally.prose += usize::from(v.prose);
        tally.grounded += usize::from(v.grounded);
        tally.assistant += usize::from(v.assistant);
        tally.first_person += usize::from(v.first_person);
        tally.with_memory += usize::from(recalled.is_some());
        tally.callbacks += usize::from(!v.recalls.is_empty());
        tally.with_lore += usize::from(lore.is_some());
        tally.lore_callbacks += usize::from(!v.lore.is_empty());
        let kept = result
            .drafts
            .first()
            .map_or_else(String::new, |d| format!(" {}", d.note));
        println!(
            "{key} turn {n} [{}{}{}{}] memory {:?} → callback [{}], lore [{}]{kept}\n    {:?}",
            if v.prose { "prose" } else { "garbled" },
            if v.assistant { ", assistant" } else { "" },
            if v.first_person { ", first person" } else { "" },
            if recalled.is_some() { ", recalled" } else { "" },
            recalled.as_ref().map(|m| m.summary.as_str()),
            v.recalls.join(","),
            v.lore.join(","),
            text.chars().take(300).collect::<String>()
        );
        if !matches!(ctl.finish(&input, Ok(result)), Report::Committed { .. }) {
            println!("{key} turn {n}: not committed");
        }
    }
    tally
}

/// A Drowned Reach save on the green night, its models both the routed `key`.
fn create_narration_save(save: &Path, key: &str) {
    create_save(&NewSave {
        campaign: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("campaigns/drowned-reach"),
        save: Some(save.to_owned()),
        scenario: Some("green_night".into()),
        seed: Some(41),
        small_model: key.into(),
        large_model: key.into(),
        calibration: Calibration::default(),
    })
    .expect("the save is created");
}

/// A gateway whose `key` sends the narration of the player's move (`action`, the move now
/// played) to the real default model, in the compact or the full form, and scripts every
/// other call for `turns` turns.
fn router_gateway(key: &str, turns: usize, action: Arc<Mutex<String>>) -> Gateway {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let standard = Gateway::open().expect("the gateway starts");
    let data = standard.data_dir().to_path_buf();
    let spec = standard
        .models()
        .get("local-large", &data)
        .expect("models.ron has local-large")
        .clone();
    let mut models = ModelsConfig::default();
    let drafts = std::env::var("DRAFTS").ok().and_then(|d| d.parse().ok());
    for (name, compact) in [("router-compact", true), ("router-full", false)] {
        let mut m = spec.clone();
        m.compact_prompts = compact;
        m.drafts = drafts.unwrap_or(m.drafts);
        models.models.insert(name.into(), m);
    }
    let gateway = Gateway::new(
        PromptRegistry::load(root.join("prompts")).expect("prompts load"),
        root.join("schemas"),
        models,
        &data,
    );
    let replies = (0..turns).flat_map(scripted::turn_replies).collect();
    let backend = spec.backend.clone();
    gateway.register_backend(key, move || {
        Ok(Box::new(Router {
            real: open_backend(&backend, &data)?,
            script: ScriptedBackend::new(Script { replies }),
            // The player's narration on the real model; NPC narrations and every other stage scripted.
            to_real: Box::new(move |request| {
                let action = action.lock().map(|a| a.clone()).unwrap_or_default();
                let prompt: String = request
                    .messages
                    .iter()
                    .map(|m| m.content.as_str())
                    .collect();
                request.stage == "narrate" && narrates(&prompt, &action)
            }),
        }) as Box<dyn Backend>)
    });
    gateway
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let turns: usize = std::env::var("TURNS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(2 * ACTIONS.len());
    // FORMS=compact (or full) plays one form only.
    let forms = std::env::var("FORMS").unwrap_or_default();
    for compact in [true, false] {
        if !forms.is_empty() && forms != if compact { "compact" } else { "full" } {
            continue;
        }
        let t = play(compact, turns);
        #[expect(clippy::cast_precision_loss, reason = "counts")]
        let pct = |k: usize, of: usize| 100.0 * k as f64 / of.max(1) as f64;
        #[expect(clippy::cast_precision_loss, reason = "counts")]
        let (secs, chars) = (
            t.time.as_secs_f64() / t.narrations.max(1) as f64,
            t.prompt_chars / t.narrations.max(1),
        );
        println!(
            "{} prompt: {} narrations; prose {:.0}%, names the campaign's people or places {:.0}%, chat-assistant or story-structure talk {:.0}%, a first-person narrator {:.0}%, calls back to the recalled memory {:.0}% ({} of {} with one), to the lore shown {:.0}% ({} of {}); {secs:.1} s and {chars} prompt characters per narration",
            if compact { "compact" } else { "full" },
            t.narrations,
            pct(t.prose, t.narrations),
            pct(t.grounded, t.narrations),
            pct(t.assistant, t.narrations),
            pct(t.first_person, t.narrations),
            pct(t.callbacks, t.with_memory),
            t.callbacks,
            t.with_memory,
            pct(t.lore_callbacks, t.with_lore),
            t.lore_callbacks,
            t.with_lore,
        );
    }
}
