//! `loreloom campaign validate|show` and `loreloom dice`.

use std::path::Path;
use std::process::ExitCode;

use crate::campaign::{self, system_rulesets};
use crate::rules::{Dice, Modifiers};

/// Print every finding, one per line, then the counts; exit 1 on errors.
pub(super) fn validate(dir: &Path) -> ExitCode {
    let report = campaign::validate(dir);
    println!("{report}");
    if report.has_errors() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Load a campaign and print what it is made of.
pub(super) fn show(dir: &Path) -> ExitCode {
    let (loaded, report) = campaign::load(dir, &[system_rulesets()]);
    let Some(c) = loaded else {
        println!("{report}");
        eprintln!(
            "error: {}: the campaign does not load; fix the errors above",
            dir.display()
        );
        return ExitCode::FAILURE;
    };
    println!("{}", c.summary());
    if c.is_sparse() {
        println!("sparse: fewer than 3 content files; a session enriches it first");
    }
    if let Some(s) = c.default_scenario() {
        println!("default scenario: {} ({})", s.id, s.title);
    }
    for (id, ch) in &c.characters {
        println!(
            "  {id:<28} {:?}, {}, chattiness {:.2}{}",
            ch.kind,
            ch.name,
            ch.chattiness,
            if ch.baked { ", baked" } else { "" },
        );
    }
    for (id, clock) in &c.world.clocks {
        println!("  clock {id}: {}/{}", clock.value, clock.max);
    }
    let (errors, warnings) = (report.errors().count(), report.warnings().count());
    if errors + warnings + report.notices.len() > 0 {
        println!("{report}");
    }
    ExitCode::SUCCESS
}

/// Roll a dice expression: `2d6+wits --mod wits=1 --seed 7`.
pub(super) fn dice(expr: &str, mods: &[String], seed: Option<u64>, times: u32) -> ExitCode {
    let mut modifiers = Modifiers::new();
    for m in mods {
        let Some((name, value)) = m.split_once('=') else {
            eprintln!("error: --mod wants NAME=VALUE, got `{m}`");
            return ExitCode::FAILURE;
        };
        let Ok(value) = value.trim().parse::<i64>() else {
            eprintln!("error: --mod {name}: `{value}` is not a whole number");
            return ExitCode::FAILURE;
        };
        modifiers.insert(name.trim().to_owned(), value);
    }
    let seed = seed.unwrap_or_else(rand::random);
    let mut dice = Dice::seeded(seed);
    for _ in 0..times.max(1) {
        match dice.roll_str(expr, &modifiers) {
            Ok(roll) => match serde_json::to_string(&roll) {
                Ok(line) => println!("{line}"),
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::FAILURE;
                }
            },
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    eprintln!("seed {seed}: the same seed gives the same rolls");
    ExitCode::SUCCESS
}
