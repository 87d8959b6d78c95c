//! SHIP (#24), each format checked by its own tools.
//!
//! Ink compiled by inkle's compiler (inkjs-compiler, npm) with no error or warning and played by
//! the ink runtime along the same choice walks as Loreloom's player, through the same passages to
//! the same endings (for the bundled story and a story GROW made); the standalone HTML clicked
//! through in headless Chromium along the same walks; EPUB passed by `EPUBCheck`;
//! questfoundry-runtime re-imported with identical stats; the package validated; the Markdown
//! manuscript complete. A story that does not validate is refused with nothing written.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use loreloom::story::player::Player;
use rand::{Rng, SeedableRng};

/// Where `./run.sh test` installs the checking tools (npm ci, pinned).
fn tools() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/ship-check");
    assert!(
        dir.join("node_modules/.bin/inkjs-compiler").is_file(),
        "the ink tools are not installed: run `./run.sh test` (or `npm ci --prefix tools/ship-check`)"
    );
    dir
}

fn ship(path: &Path, format: &str, out: &Path) -> std::process::Output {
    common::loreloom(
        &[
            "ship",
            path.to_str().unwrap(),
            "--format",
            format,
            "--out",
            out.to_str().unwrap(),
        ],
        None,
    )
}

/// Compiles `story.ink` with inkle's compiler: no output at all (no error,
/// no warning) and exit 0. Returns the compiled JSON's path.
fn compile_ink(ink: &Path) -> PathBuf {
    let json = ink.with_extension("json");
    let out = Command::new(tools().join("node_modules/.bin/inkjs-compiler"))
        .arg(ink)
        .arg("-o")
        .arg(&json)
        .output()
        .unwrap();
    let said = format!("{}{}", common::stdout(&out), common::stderr(&out));
    assert!(
        out.status.success() && said.trim().is_empty(),
        "inkjs-compiler: {said}"
    );
    json
}

/// Random walks through our player: the choice numbers taken, the passages
/// shown, and whether each reached an ending.
fn walks(story: &Path, count: usize) -> Vec<(Vec<usize>, Vec<String>, bool)> {
    let package = loreloom::story::load::open(story).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(24);
    (0..count)
        .map(|_| {
            let mut player = Player::new(package.story.clone());
            let mut picks = Vec::new();
            let mut shown = vec![player.story().passage(player.current()).id.clone()];
            while !player.is_ended() && picks.len() < 200 {
                let open = player.open_choices().count();
                assert!(open > 0, "a dead end at {}", shown.last().unwrap());
                let n = rng.random_range(1..=open);
                player.choose_number(n).unwrap();
                picks.push(n);
                shown.push(player.story().passage(player.current()).id.clone());
            }
            (picks, shown, player.is_ended())
        })
        .collect()
}

/// The same walks in the ink runtime.
fn ink_walks(compiled: &Path, picks: &[Vec<usize>]) -> Vec<(Vec<String>, bool)> {
    let out = Command::new("node")
        .arg(tools().join("ink-play.js"))
        .arg(compiled)
        .arg(serde_json::to_string(picks).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::stderr(&out));
    let results: Vec<serde_json::Value> = serde_json::from_str(&common::stdout(&out)).unwrap();
    results
        .into_iter()
        .map(|r| {
            let shown = r["passages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().unwrap().to_owned())
                .collect();
            (shown, r["ended"].as_bool().unwrap())
        })
        .collect()
}

/// A story GROW made (5 dilemmas: gated choices, routed endings), as a
/// package folder under `dir`.
#[cfg(feature = "store")]
fn grown_story(dir: &Path) -> PathBuf {
    use loreloom::author::grow::{grow, synthetic, to_story};
    let seeded = synthetic(5, 1, 2);
    let file = to_story(&grow(&seeded).unwrap(), &seeded);
    assert!(file.codewords.len() >= 2, "the walks cross codeword gates");
    let story = dir.join("grown");
    std::fs::create_dir_all(&story).unwrap();
    std::fs::write(
        story.join("story.json"),
        serde_json::to_string_pretty(&file).unwrap(),
    )
    .unwrap();
    story
}

/// Ships `story` to ink, compiles it, and plays 24 walks in both runtimes.
fn same_in_ink(story: &Path, dir: &Path) {
    let out = ship(story, "ink", dir);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let compiled = compile_ink(&dir.join("story.ink"));
    let ours = walks(story, 24);
    let picks: Vec<Vec<usize>> = ours.iter().map(|(p, _, _)| p.clone()).collect();
    let theirs = ink_walks(&compiled, &picks);
    let mut endings = std::collections::BTreeSet::new();
    for ((picks, shown, ended), (ink_shown, ink_ended)) in ours.iter().zip(&theirs) {
        assert_eq!(shown, ink_shown, "walk {picks:?}");
        assert_eq!(ended, ink_ended, "walk {picks:?}");
        if *ended {
            endings.insert(shown.last().unwrap().clone());
        }
    }
    assert!(!endings.is_empty(), "no walk reached an ending");
}

#[test]
fn the_bundled_story_plays_the_same_in_ink() {
    let dir = tempfile::tempdir().unwrap();
    let story = Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns/the-glass-orchard");
    same_in_ink(&story, dir.path());
    let ink = std::fs::read_to_string(dir.path().join("story.ink")).unwrap();
    assert!(
        ink.contains("VAR cw_heard_the_pear = false"),
        "{}",
        &ink[..400]
    );
    assert!(ink.contains("-> END"));
}

#[cfg(feature = "store")]
#[test]
fn a_grown_story_plays_the_same_in_ink() {
    let dir = tempfile::tempdir().unwrap();
    let story = grown_story(dir.path());
    same_in_ink(&story, &dir.path().join("ink"));
    let ink = std::fs::read_to_string(dir.path().join("ink/story.ink")).unwrap();
    assert!(ink.contains("+ {cw_"), "gated choices in the ink");
    assert!(ink.contains("    ~ cw_"), "granted codewords in the ink");
}

#[test]
fn the_manuscript_has_every_passage_and_choice() {
    let dir = tempfile::tempdir().unwrap();
    let story = Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns/the-glass-orchard");
    let out = ship(&story, "markdown", dir.path());
    assert!(out.status.success(), "{}", common::stderr(&out));
    let md = std::fs::read_to_string(dir.path().join("story.md")).unwrap();
    let file = loreloom::story::load::load_file(&story).unwrap().file;
    assert!(md.starts_with("# The Glass Orchard\n"));
    for p in &file.passages {
        assert!(
            md.contains(&format!("## {}", p.title.as_deref().unwrap_or(&p.id))),
            "{}",
            p.id
        );
        for c in &p.choices {
            assert!(
                md.contains(&format!("- [{}](#", c.label.replace(['[', ']'], ""))),
                "{}",
                c.label
            );
        }
    }
    assert_eq!(
        md.matches("**THE END**").count(),
        file.passages
            .iter()
            .filter(|p| p.choices.is_empty())
            .count()
    );
    // Its pictures, copied beside it, and the codex with what unlocks each tier.
    assert!(!file.illustrations.is_empty());
    for art in &file.illustrations {
        assert!(md.contains(&format!("]({})", art.asset)), "{}", art.asset);
        assert!(dir.path().join(&art.asset).is_file(), "{}", art.asset);
    }
    assert!(md.contains("## Codex\n"));
    for tier in &file.codex {
        assert!(md.contains(tier.content.trim()), "{}", tier.id);
        if !tier.visible_when.is_empty() {
            assert!(md.contains(&format!("*(once {})*", tier.visible_when.join(", "))));
        }
    }
}

#[test]
fn a_story_that_does_not_validate_is_not_shipped() {
    let dir = tempfile::tempdir().unwrap();
    let story = dir.path().join("broken.json");
    std::fs::write(
        &story,
        serde_json::json!({
            "format": "loreloom-story", "version": 1,
            "meta": {"id": "broken", "title": "Broken"},
            "passages": [{"id": "a", "prose": "A door.", "choices": [{"label": "Open it", "to": "nowhere"}]}]
        })
        .to_string(),
    )
    .unwrap();
    let out_dir = dir.path().join("out");
    let out = ship(&story, "ink", &out_dir);
    assert!(!out.status.success());
    let said = common::stderr(&out);
    assert!(
        said.contains("SHIP writes only a story that validates"),
        "{said}"
    );
    assert!(said.contains("nowhere"), "{said}");
    assert!(!out_dir.exists());
}

/// `loreloom stats --json` of a story.
fn stats(path: &Path) -> serde_json::Value {
    let out = common::loreloom(&["stats", path.to_str().unwrap(), "--json"], None);
    assert!(out.status.success(), "{}", common::stderr(&out));
    serde_json::from_str(&common::stdout(&out)).unwrap()
}

/// QuestFoundry's own export (a fixture made by `qf export json`) shipped
/// back to questfoundry-runtime re-imports with identical stats, its art
/// beside it; shipped as a Loreloom package it validates and keeps its art.
#[test]
fn questfoundry_runtime_round_trips_with_identical_stats() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = common::fixture("keepers-bargain.json");
    let out = ship(&fixture, "questfoundry", &dir.path().join("qf"));
    assert!(out.status.success(), "{}", common::stderr(&out));
    let shipped = dir.path().join("qf/story.qf.json");
    assert_eq!(stats(&shipped), stats(&fixture));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&shipped).unwrap()).unwrap();
    assert_eq!(doc["format"], "questfoundry-runtime");
    assert_eq!(doc["version"], 1);

    let out = ship(&fixture, "package", &dir.path().join("pkg"));
    assert!(out.status.success(), "{}", common::stderr(&out));
    let check = common::loreloom(
        &["validate", dir.path().join("pkg").to_str().unwrap()],
        None,
    );
    // The fixture's own two residue warnings come along; no errors.
    assert!(
        common::stderr(&check).contains(": 0 errors, 2 warnings"),
        "{}{}",
        common::stdout(&check),
        common::stderr(&check)
    );
    assert_eq!(stats(&dir.path().join("pkg")), stats(&fixture));
}

/// The bundled story (art, codex tiers, music) as a package and as
/// questfoundry-runtime: the package validates with every file it names
/// beside it; the runtime JSON re-imports with the same passages, choices,
/// endings, codewords and art, and leaves out (and says so) the codex
/// entries that unlock with codewords.
#[test]
fn the_bundled_story_ships_as_a_package_and_as_questfoundry_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let story = Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns/the-glass-orchard");
    let out = ship(&story, "package", &dir.path().join("pkg"));
    assert!(out.status.success(), "{}", common::stderr(&out));
    let check = common::loreloom(
        &["validate", dir.path().join("pkg").to_str().unwrap()],
        None,
    );
    assert!(
        common::stderr(&check).contains(": 0 errors"),
        "{}",
        common::stderr(&check)
    );
    assert_eq!(stats(&dir.path().join("pkg")), stats(&story));
    let file = loreloom::story::load::load_file(&story).unwrap().file;
    for (asset, _) in loreloom::story::load::referenced_assets(&file) {
        assert!(dir.path().join("pkg").join(asset).is_file(), "{asset}");
    }

    let out = ship(&story, "questfoundry", &dir.path().join("qf"));
    assert!(out.status.success(), "{}", common::stderr(&out));
    let gated = file
        .codex
        .iter()
        .filter(|c| !c.visible_when.is_empty())
        .count();
    if gated > 0 {
        assert!(
            common::stderr(&out).contains(&format!("{gated} codex entries unlock with codewords")),
            "{}",
            common::stderr(&out)
        );
    }
    let (ours, theirs) = (stats(&story), stats(&dir.path().join("qf/story.qf.json")));
    for key in [
        "passages",
        "choices",
        "endings",
        "codewords",
        "entities",
        "reachable_passages",
        "reachable_endings",
    ] {
        assert_eq!(ours[key], theirs[key], "{key}");
    }
    assert_eq!(
        usize::try_from(theirs["codex_entries"].as_u64().unwrap()).unwrap(),
        file.codex.len() - gated
    );
}

/// Ships `story` as one HTML file and plays `count` of our player's walks
/// in headless Chromium (Debian's, driven by playwright-core), clicking the
/// n-th offered choice: the same passages and endings, no request beyond
/// the page, no script error; a reload half-way through the first walk
/// goes on from the save in the browser; screenshots are not blank. Returns the
/// report (with the codex text at the end of the first walk).
fn same_in_html(story: &Path, dir: &Path, count: usize) -> serde_json::Value {
    let out = ship(story, "html", dir);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let page = dir.join("story.html");
    let ours = walks(story, count);
    let picks: Vec<Vec<usize>> = ours.iter().map(|(p, _, _)| p.clone()).collect();
    let shots = std::env::var_os("KEEP_SHOTS").map_or_else(|| dir.join("shots"), PathBuf::from);
    std::fs::create_dir_all(&shots).unwrap();
    let run = Command::new("node")
        .arg(tools().join("html-play.js"))
        .arg(&page)
        .arg(serde_json::to_string(&picks).unwrap())
        .arg(&shots)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", common::stderr(&run));
    let report: serde_json::Value = serde_json::from_str(&common::stdout(&run)).unwrap();
    assert_eq!(
        report["requests"],
        serde_json::json!([]),
        "the page reached out"
    );
    assert_eq!(report["errors"], serde_json::json!([]));
    assert_eq!(
        report["pwned"],
        serde_json::json!([]),
        "a story's script ran"
    );
    for ((picks, shown, ended), result) in ours.iter().zip(report["results"].as_array().unwrap()) {
        let theirs: Vec<String> = result["passages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap().to_owned())
            .collect();
        assert_eq!(shown, &theirs, "walk {picks:?}");
        assert_eq!(*ended, result["ended"].as_bool().unwrap(), "walk {picks:?}");
    }
    // The first walk was reloaded half-way: the save in the browser's
    // storage put the reader back where they were, with the same choices.
    let reload = &report["results"][0]["reload"];
    if !ours[0].0.is_empty() {
        assert_eq!(reload["before"], reload["after"], "the reload went on");
        assert!(reload["before"]["passage"].is_string(), "{reload}");
    }
    // Screenshots: real pictures with more than a background colour in them.
    for shot in ["walk-0.png", "codex.png"] {
        let bytes = std::fs::read(shots.join(shot)).unwrap();
        let img = image::load_from_memory(&bytes).unwrap().to_rgb8();
        let colours: std::collections::BTreeSet<[u8; 3]> = img.pixels().map(|p| p.0).collect();
        assert!(
            colours.len() > 50,
            "{shot} is nearly blank ({} colours)",
            colours.len()
        );
    }
    report
}

/// The bundled story as one HTML file in Chromium: its walks as in our
/// player, and the codex at the end of the first walk shows what it
/// unlocked (`KEEP_SHOTS=DIR` keeps the screenshots).
#[test]
fn the_bundled_story_plays_the_same_as_one_html_file_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let story = Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns/the-glass-orchard");
    let report = same_in_html(&story, dir.path(), 6);
    let codex = report["results"][0]["codex"].as_str().unwrap();
    assert!(codex.contains("Agathe Lusk, Night-Keeper"), "{codex}");
    let html = std::fs::read_to_string(dir.path().join("story.html")).unwrap();
    assert!(
        html.contains("data:image/png;base64,"),
        "pictures are inlined"
    );
}

/// A hostile story (#43): script, an event handler, `javascript:` and
/// `data:` links in its prose and codex. As one HTML file in Chromium it plays
/// as ever, and none of its script runs.
#[test]
fn a_story_that_carries_script_runs_none_of_it_as_one_html_file() {
    let dir = tempfile::tempdir().unwrap();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns/the-glass-orchard");
    let mut story: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(shipped.join("story.json")).unwrap())
            .unwrap();
    let hostile = "\n\n[Read on](javascript:window.__pwned=1) <script>window.__pwned=1</script> \
                   <img src=x onerror=\"window.__pwned=1\"> [more]( JAVASCRIPT:window.__pwned=1) \
                   ![art](javascript:window.__pwned=1) [page](data:text/html,<script>1</script>) \
                   <a href=\"javascript:window.__pwned=1\">here</a>";
    for p in story["passages"].as_array_mut().unwrap() {
        let prose = format!("{}{hostile}", p["prose"].as_str().unwrap());
        p["prose"] = serde_json::json!(prose);
    }
    let folder = dir.path().join("hostile");
    std::fs::create_dir_all(&folder).unwrap();
    // The story's own pictures and music, copied (a link out of the
    // folder would be refused).
    for sub in ["art", "music"] {
        std::fs::create_dir_all(folder.join(sub)).unwrap();
        for entry in std::fs::read_dir(shipped.join(sub)).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), folder.join(sub).join(entry.file_name())).unwrap();
        }
    }
    std::fs::write(folder.join("story.json"), story.to_string()).unwrap();
    same_in_html(&folder, &dir.path().join("html"), 2);
    let html = std::fs::read_to_string(dir.path().join("html/story.html")).unwrap();
    let lower = html.to_lowercase();
    // Rendered links are `<a href=\"…\"` in the page's JSON; the raw HTML
    // of the prose is there only as text (`&lt;a href…`).
    assert!(
        !lower.contains("<a href=\\\"javascript"),
        "a javascript: link was shipped"
    );
    assert!(
        !lower.contains("<a href=\\\"data:"),
        "a data: link was shipped"
    );
    assert!(
        lower.contains("&lt;a href="),
        "the raw link is shown as text"
    );
    assert!(
        !lower.contains("<script>window"),
        "the story's script was shipped as script"
    );
}

/// A story GROW made (gated choices, routed endings) as one HTML file in
/// Chromium: the same walks as our player.
#[cfg(feature = "store")]
#[test]
fn a_grown_story_plays_the_same_as_one_html_file_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let story = grown_story(dir.path());
    same_in_html(&story, &dir.path().join("html"), 8);
}

/// An EPUB checked by the W3C's `EPUBCheck` (Debian's `epubcheck`): no
/// fatal, error or warning.
fn epubcheck(book: &Path) {
    let jar =
        std::env::var("EPUBCHECK_JAR").unwrap_or_else(|_| "/usr/share/java/epubcheck.jar".into());
    let out = Command::new("java")
        .args(["-jar", &jar])
        .arg(book)
        .output()
        .expect("java runs (./run.sh test installs epubcheck and a JRE)");
    let said = format!("{}{}", common::stdout(&out), common::stderr(&out));
    assert!(
        out.status.success() && said.contains("0 fatals / 0 errors / 0 warnings"),
        "{said}"
    );
}

/// The bundled story (art, codex) and a grown story as EPUB 3: `EPUBCheck`
/// finds nothing; shipping twice gives the same bytes; every passage is a
/// chapter and every picture is inside.
#[test]
fn stories_ship_as_epub_books_that_epubcheck_passes() {
    let dir = tempfile::tempdir().unwrap();
    let story = Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns/the-glass-orchard");
    for out_dir in ["a", "b"] {
        let out = ship(&story, "epub", &dir.path().join(out_dir));
        assert!(out.status.success(), "{}", common::stderr(&out));
    }
    let book = dir.path().join("a/story.epub");
    assert_eq!(
        std::fs::read(&book).unwrap(),
        std::fs::read(dir.path().join("b/story.epub")).unwrap(),
        "SHIP is deterministic"
    );
    epubcheck(&book);
    let file = loreloom::story::load::load_file(&story).unwrap().file;
    let zip = zip::ZipArchive::new(std::fs::File::open(&book).unwrap()).unwrap();
    let names: Vec<String> = zip.file_names().map(|n| n.unwrap().into_owned()).collect();
    assert_eq!(names[0], "mimetype");
    for n in 1..=file.passages.len() {
        assert!(names.contains(&format!("OEBPS/p{n}.xhtml")), "{n}");
    }
    for ill in &file.illustrations {
        assert!(
            names.contains(&format!("OEBPS/{}", ill.asset)),
            "{}",
            ill.asset
        );
    }

    #[cfg(feature = "store")]
    {
        let grown = grown_story(dir.path());
        let out = ship(&grown, "epub", &dir.path().join("c"));
        assert!(out.status.success(), "{}", common::stderr(&out));
        epubcheck(&dir.path().join("c/story.epub"));
    }
}

/// Twee 3 for `SugarCube`, read back by extwee (npm; its Twee parser, then a
/// Twine 2 archive compiled and parsed again): the title, a stable IFID,
/// the `SugarCube` format, the start, every passage, and each passage's
/// links to exactly its choices' targets, in order; for the bundled story
/// and a grown one. (Compiling to playable `SugarCube` HTML needs its
/// own format file, which no registry here carries.)
#[test]
fn stories_ship_as_twee_that_extwee_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    #[cfg_attr(not(feature = "store"), allow(unused_mut, clippy::useless_vec))]
    let mut stories =
        vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns/the-glass-orchard")];
    #[cfg(feature = "store")]
    stories.push(grown_story(dir.path()));
    for (n, story) in stories.iter().enumerate() {
        let out_dir = dir.path().join(format!("twee{n}"));
        let out = ship(story, "twee", &out_dir);
        assert!(out.status.success(), "{}", common::stderr(&out));
        let run = Command::new("node")
            .arg(tools().join("twee-check.mjs"))
            .arg(out_dir.join("story.twee"))
            .output()
            .unwrap();
        assert!(run.status.success(), "{}", common::stderr(&run));
        let back: serde_json::Value = serde_json::from_str(&common::stdout(&run)).unwrap();
        let file = loreloom::story::load::load_file(story).unwrap().file;
        let names = loreloom::ship::identifiers(file.passages.iter().map(|p| p.id.as_str()), "p_");
        assert_eq!(back["title"], file.meta.title.as_str());
        assert_eq!(back["format"], "SugarCube");
        assert_eq!(back["ifid"], loreloom::ship::ifid(&file.meta.id).as_str());
        let start = file
            .start
            .clone()
            .unwrap_or_else(|| file.passages[0].id.clone());
        assert_eq!(back["start"], names[&start].as_str());
        let read = back["passages"].as_array().unwrap();
        assert_eq!(
            read.len(),
            file.passages.len() + 1,
            "every passage and StoryInit"
        );
        for p in &file.passages {
            let found = read
                .iter()
                .find(|r| r["name"] == names[&p.id].as_str())
                .unwrap_or_else(|| panic!("{} is missing", p.id));
            let targets: Vec<&str> = p.choices.iter().map(|c| names[&c.to].as_str()).collect();
            assert_eq!(found["links"], serde_json::json!(targets), "{}", p.id);
        }
    }
}

/// A story naming eight files outside its folder (#43): `validate` says
/// each is an error, SHIP refuses it and writes nothing, and nothing outside
/// is read; shipped into its own folder, a story's art is not truncated.
#[test]
fn assets_outside_the_story_folder_are_refused_and_art_is_never_copied_onto_itself() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("hostile");
    std::fs::create_dir_all(folder.join("art")).unwrap();
    std::fs::write(dir.path().join("secret.png"), b"secret").unwrap();
    std::os::unix::fs::symlink(dir.path().join("secret.png"), folder.join("art/out.png")).unwrap();
    std::os::unix::fs::symlink(dir.path(), folder.join("up")).unwrap();
    let bad = [
        "/etc/shadow",
        "../secret.png",
        "art/../../secret.png",
        "art/out.png",
        "up/secret.png",
        "C:/secret.png",
        "art\\..\\..\\secret.png",
        "/proc/self/environ",
    ];
    let illustrations: Vec<serde_json::Value> = bad
        .iter()
        .enumerate()
        .map(|(i, a)| serde_json::json!({"id": format!("i{i}"), "asset": a, "caption": "x", "depicts": ["a"]}))
        .collect();
    let story = folder.join("story.json");
    std::fs::write(
        &story,
        serde_json::json!({
            "format": "loreloom-story", "version": 1,
            "meta": {"id": "hostile", "title": "Hostile"},
            "passages": [{"id": "a", "prose": "A door.", "choices": [{"label": "Open it", "to": "b"}]},
                         {"id": "b", "prose": "The end.", "choices": []}],
            "illustrations": illustrations
        })
        .to_string(),
    )
    .unwrap();
    let checked = common::loreloom(&["validate", story.to_str().unwrap()], None);
    let said = common::stdout(&checked);
    assert!(!checked.status.success(), "{said}");
    assert_eq!(said.matches("[asset-outside]").count(), 8, "{said}");
    for format in ["html", "package", "markdown", "epub"] {
        let out_dir = dir.path().join(format!("out-{format}"));
        let out = ship(&story, format, &out_dir);
        assert!(!out.status.success(), "{format}");
        assert!(!out_dir.exists(), "{format}: nothing written");
    }

    // Shipped as a package into its own folder: each file is its own copy
    // target; nothing is truncated.
    let own = dir.path().join("own");
    std::fs::create_dir_all(own.join("art")).unwrap();
    let picture = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns/the-glass-orchard/art/cover.png"),
    )
    .unwrap();
    std::fs::write(own.join("art/cover.png"), &picture).unwrap();
    let story = own.join("story.json");
    std::fs::write(
        &story,
        serde_json::json!({
            "format": "loreloom-story", "version": 1,
            "meta": {"id": "own", "title": "Own", "cover": "./art/cover.png"},
            "passages": [{"id": "a", "prose": "A door.", "choices": [{"label": "Open it", "to": "b"}]},
                         {"id": "b", "prose": "The end.", "choices": []}],
            "illustrations": [{"id": "i", "asset": "art//cover.png", "caption": "x", "depicts": ["a"]}]
        })
        .to_string(),
    )
    .unwrap();
    // `--out` a second spelling of the story's own folder (a link to it).
    let link = dir.path().join("own-link");
    std::os::unix::fs::symlink(&own, &link).unwrap();
    let out = ship(&story, "package", &link);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let kept = std::fs::read(own.join("art/cover.png")).unwrap();
    assert!(
        kept == picture,
        "the art was copied onto itself: {} bytes of {}",
        kept.len(),
        picture.len()
    );
}
