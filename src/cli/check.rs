//! `loreloom validate` and `loreloom stats`.

use std::path::Path;
use std::process::ExitCode;

use crate::story::load::check_assets;
use crate::story::{Stats, load_file, validate_file};

/// Print every problem and warning; exit 1 when there are errors.
pub(super) fn validate(path: &Path) -> ExitCode {
    let loaded = match load_file(path) {
        Ok(loaded) => loaded,
        Err(err) => {
            eprintln!("error: {err}");
            return ExitCode::FAILURE;
        }
    };
    let shown = loaded.path.display().to_string();
    let assets = check_assets(&loaded.file, &loaded.root);
    let (_, mut report) = validate_file(loaded.file);
    report.diagnostics.extend(loaded.notes);
    report.diagnostics.extend(assets);
    for diagnostic in &report.diagnostics {
        println!("{diagnostic}");
    }
    let (errors, warnings) = (report.errors(), report.warnings());
    println!("{shown}: {errors} errors, {warnings} warnings");
    if errors == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Print the story's counts, as JSON or as a table.
pub(super) fn stats(path: &Path, json: bool) -> ExitCode {
    let loaded = match load_file(path) {
        Ok(loaded) => loaded,
        Err(err) => {
            eprintln!("error: {err}");
            return ExitCode::FAILURE;
        }
    };
    let shown = loaded.path.display().to_string();
    let (story, report) = validate_file(loaded.file);
    let (Some(story), Some(walk)) = (story, report.walk.as_ref()) else {
        eprintln!(
            "error: {shown}: the story has broken references; run `loreloom validate {}`",
            path.display()
        );
        return ExitCode::FAILURE;
    };
    let stats = Stats::of(&story, walk);
    if json {
        match serde_json::to_string(&stats) {
            Ok(line) => println!("{line}"),
            Err(err) => {
                eprintln!("error: {err}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        println!("{}", story.title());
        println!("  passages            {}", stats.passages);
        println!("  choices             {}", stats.choices);
        println!("  endings             {}", stats.endings);
        println!("  codewords           {}", stats.codewords);
        println!("  entities            {}", stats.entities);
        println!("  codex entries       {}", stats.codex_entries);
        println!("  illustrations       {}", stats.illustrations);
        println!("  reachable passages  {}", stats.reachable_passages);
        println!("  reachable endings   {}", stats.reachable_endings);
    }
    ExitCode::SUCCESS
}
