//! Stream summarisation (seed 004, seed 002 §7.6 context compression): a long scripted session compresses its oldest turns into a stored summary, the narrator reads the summary instead of those turns, and a rewind past the summary drops it.
#![cfg(feature = "store")]

use std::path::{Path, PathBuf};

use loreloom::llm::{Gateway, ModelsConfig, PromptRegistry, Script, ScriptedBackend};
use loreloom::session::controller::{
    COMPRESS_AFTER, Controller, KEEP_VERBATIM, NewSave, Report, Step, create_save,
};
use loreloom::session::play::run_turn;
use loreloom::session::turn::Calibration;
use loreloom::store::Store;

#[allow(dead_code)]
#[path = "common/scripted.rs"]
mod scripted;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn gateway(dir: &Path) -> Gateway {
    Gateway::new(
        PromptRegistry::load(root().join("prompts")).unwrap(),
        root().join("schemas"),
        ModelsConfig::default(),
        dir,
    )
}

fn script(gateway: &Gateway, replies: Vec<loreloom::llm::scripted::Reply>) {
    let backend = ScriptedBackend::new(Script { replies });
    gateway.register_script("small", backend.clone());
    gateway.register_script("large", backend);
}

/// Turn `n` (0-based) through the controller; returns the first narrator prompt.
fn play(ctl: &mut Controller, gateway: &Gateway, n: usize) -> String {
    script(gateway, scripted::turn_replies(n));
    let Step::Run(input) = ctl.handle(&format!("I look around ({n})")) else {
        panic!("turn {n} did not run")
    };
    let result = run_turn(gateway, ctl.state.clone(), input.clone(), |_| {}).unwrap();
    let prompt: String = result
        .records
        .iter()
        .find(|r| r.stage == "narrate")
        .and_then(|r| r.first())
        .map(|a| a.messages.iter().map(|m| m.content.clone()).collect())
        .unwrap_or_default();
    assert!(matches!(
        ctl.finish(&input, Ok(result)),
        Report::Committed { .. }
    ));
    prompt
}

const SUMMARY: &str =
    "You crossed the Reach seven times with Hesper while the lanterns burned green.";

#[test]
fn old_turns_are_compressed_and_the_narrator_reads_the_summary_instead() {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("long.db");
    create_save(&NewSave {
        campaign: root().join("campaigns/drowned-reach"),
        save: Some(save.clone()),
        scenario: Some("green_night".into()),
        seed: Some(8),
        small_model: "small".into(),
        large_model: "large".into(),
        calibration: Calibration::default(),
    })
    .unwrap();
    let gateway = gateway(dir.path());
    let mut ctl = Controller::open_with(&save, None).unwrap();
    for n in 0..COMPRESS_AFTER {
        play(&mut ctl, &gateway, n);
        assert!(ctl.compression_request().is_none(), "after turn {n}");
    }
    play(&mut ctl, &gateway, COMPRESS_AFTER);
    let c = ctl
        .compression_request()
        .expect("more than COMPRESS_AFTER unsummarised turns");
    let compressed = COMPRESS_AFTER + 1 - KEEP_VERBATIM;
    assert_eq!((c.turn_start, c.turn_end), (1, compressed as u64));
    assert_eq!(c.request.stage, "recap");
    let events = c.request.vars["events"].as_array().unwrap();
    assert!(
        events
            .iter()
            .any(|e| e == "Turn 0: you grip the cold rail as the lanterns flare.")
    );
    assert!(!events.iter().any(|e| {
        e.as_str()
            .unwrap()
            .starts_with(&format!("Turn {compressed}:"))
    }));
    // A failed summariser changes nothing.
    ctl.finish_compression(&c, Err("the model is busy".into()));
    assert_eq!(ctl.state.summarised_through, 0);
    script(&gateway, vec![scripted::reply("recap", SUMMARY)]);
    let written = gateway
        .call(c.request.clone())
        .wait()
        .result
        .map(|v| v.as_str().unwrap_or_default().to_owned())
        .map_err(|e| e.to_string());
    ctl.finish_compression(&c, written);
    assert_eq!(ctl.state.summarised_through, compressed as u64);
    assert_eq!(ctl.state.earlier, [SUMMARY]);
    assert!(ctl.compression_request().is_none());

    let prompt = play(&mut ctl, &gateway, COMPRESS_AFTER + 1);
    assert!(
        prompt.contains("Earlier in the story (summarised):"),
        "{prompt}"
    );
    assert!(prompt.contains(SUMMARY), "{prompt}");
    for n in 0..compressed {
        assert!(
            !prompt.contains(&format!("Turn {n}:")),
            "turn {n} is summarised: {prompt}"
        );
        assert!(
            !prompt.contains(&format!("Turn {n},")),
            "turn {n} is summarised: {prompt}"
        );
    }
    assert!(
        prompt.contains(&format!("Turn {COMPRESS_AFTER}:")),
        "{prompt}"
    );
    drop(ctl);

    // The summary is in the save and comes back when it is reopened.
    let store = Store::open(&save).unwrap();
    assert_eq!(
        store
            .query_i64("SELECT count(*) FROM summaries WHERE scope = 'compression'")
            .unwrap(),
        1
    );
    drop(store);
    let mut ctl = Controller::open_with(&save, None).unwrap();
    assert_eq!(ctl.state.earlier, [SUMMARY]);
    // Rewound to before the summarised turns ended, the summary no longer applies.
    assert!(matches!(
        ctl.handle("/rewind 3"),
        Step::Report(Report::Rewound { .. })
    ));
    assert!(ctl.state.earlier.is_empty());
    assert_eq!(ctl.state.summarised_through, 0);
}
