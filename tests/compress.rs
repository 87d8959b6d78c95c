//! Stream summarisation (seed 004, seed 002 §7.6 context compression) in a long scripted session.
//!
//! The session compresses its oldest turns into a stored summary, the narrator reads the summary
//! instead of those turns, and a rewind past the summary drops it.
#![cfg(feature = "store")]

mod common;

use common::play::{gateway, new_save, script, turn};
use common::scripted;
use loreloom::session::controller::{Controller, Report, Step};
use loreloom::session::summaries::{COMPRESS_AFTER, KEEP_VERBATIM};
use loreloom::store::Store;

/// Turn `n` (0-based) through the controller; returns the first narrator prompt.
fn play(ctl: &mut Controller, gateway: &loreloom::llm::Gateway, n: usize) -> String {
    turn(
        ctl,
        gateway,
        &format!("I look around ({n})"),
        scripted::turn_replies(n),
    )
    .1
}

const SUMMARY: &str =
    "You crossed the Reach seven times with Hesper while the lanterns burned green.";

#[test]
fn old_turns_are_compressed_and_the_narrator_reads_the_summary_instead() {
    let dir = tempfile::tempdir().unwrap();
    let save = new_save(dir.path(), "drowned-reach", Some("green_night"), 8);
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
