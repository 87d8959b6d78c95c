//! The terminal player: drives the headless engine from typed or scripted input.
//!
//! It prints what the engine presents.

use std::io::{self, BufRead, Write};
use std::path::Path;
use std::process::ExitCode;

use bevy::app::App;
use bevy::ecs::message::Messages;

use crate::engine::headless_app;
use crate::engine::story_player::{
    ActiveStory, CodexUnlocked, PresentPassage, StoryCommand, StoryNotice,
};
use crate::story::{Availability, SaveDocument, open};

const HELP: &str = "Type a choice number, or:
  :undo [N]     take back the last N choices (default 1)
  :codex        what you have learned about the people and places
  :state        codewords held, passages visited, how everyone stands
  :why          choices hidden here and what they need
  :save FILE    save this playthrough to FILE
  :load FILE    continue from a save
  :restart      start again from the beginning
  :quit         leave";

/// How a terminal session ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Ended,
    Quit,
    OutOfInput,
}

/// Play `path` in the terminal, from `choices` if given, else from stdin.
pub(super) fn play(path: &Path, choices: Option<Vec<usize>>) -> ExitCode {
    let package = match open(path) {
        Ok(package) => package,
        Err(err) => {
            eprintln!("error: {err}");
            return ExitCode::FAILURE;
        }
    };
    for note in &package.notes {
        eprintln!("{note}");
    }
    let scripted = choices.is_some();
    let input: Box<dyn Iterator<Item = String>> = match choices {
        Some(numbers) => Box::new(numbers.into_iter().map(|n| n.to_string())),
        // Lines that are not UTF-8 arrive as replacement characters and get the usual one-line answer.
        None => Box::new(
            io::stdin()
                .lock()
                .split(b'\n')
                .map_while(Result::ok)
                .map(|line| {
                    String::from_utf8_lossy(&line)
                        .trim_end_matches('\r')
                        .to_owned()
                }),
        ),
    };
    let stdout = io::stdout();
    let mut session = TerminalSession {
        app: headless_app(package),
        out: stdout.lock(),
        echo: scripted,
    };
    match session.run(input) {
        Ok(Outcome::OutOfInput) if scripted => {
            let active = session.app.world().resource::<ActiveStory>();
            let player = &active.player;
            eprintln!(
                "stopped at passage `{}`: the scripted choices ran out before an ending",
                player.story().passage(player.current()).id
            );
            ExitCode::from(2)
        }
        Ok(Outcome::Ended | Outcome::Quit | Outcome::OutOfInput) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}

/// A headless engine plus a writer for what it presents.
pub struct TerminalSession<W: Write> {
    pub app: App,
    pub out: W,
    /// Print each input line after the prompt (for scripted runs and transcripts).
    pub echo: bool,
}

impl<W: Write> TerminalSession<W> {
    /// Play until an ending, `:quit`, or the end of input.
    pub fn run(&mut self, mut input: impl Iterator<Item = String>) -> io::Result<Outcome> {
        let title = self.active().package.story.title().to_owned();
        writeln!(self.out, "{title}\n{}", "=".repeat(title.chars().count()))?;
        if self.send(StoryCommand::Present)? {
            return Ok(Outcome::Ended);
        }
        loop {
            write!(self.out, "> ")?;
            self.out.flush()?;
            let Some(line) = input.next() else {
                writeln!(self.out)?;
                return Ok(Outcome::OutOfInput);
            };
            if self.echo {
                writeln!(self.out, "{line}")?;
            }
            let line = line.trim();
            let (word, arg) = line.split_once(' ').unwrap_or((line, ""));
            let arg = arg.trim();
            let command = match word {
                "" => continue,
                ":quit" | ":q" => return Ok(Outcome::Quit),
                ":help" | ":h" | "?" => {
                    writeln!(self.out, "{HELP}")?;
                    continue;
                }
                ":codex" => {
                    self.print_codex()?;
                    continue;
                }
                ":state" => {
                    self.print_state()?;
                    continue;
                }
                ":why" => {
                    self.print_hidden()?;
                    continue;
                }
                ":save" => {
                    self.save(arg)?;
                    continue;
                }
                ":load" => match Self::read_save(arg) {
                    Ok(doc) => StoryCommand::Restore(Box::new(doc)),
                    Err(message) => {
                        writeln!(self.out, "{message}")?;
                        continue;
                    }
                },
                ":undo" => {
                    let steps = if arg.is_empty() { Ok(1) } else { arg.parse() };
                    let Ok(steps) = steps else {
                        writeln!(self.out, "`:undo` takes a number of steps, like `:undo 2`")?;
                        continue;
                    };
                    StoryCommand::Undo(steps)
                }
                ":restart" => StoryCommand::Restart,
                number => {
                    let Ok(n) = number.parse::<usize>() else {
                        writeln!(
                            self.out,
                            "`{line}` is not a choice; type a choice number, or :help"
                        )?;
                        continue;
                    };
                    StoryCommand::Choose(n)
                }
            };
            if self.send(command)? {
                return Ok(Outcome::Ended);
            }
        }
    }

    fn active(&self) -> &ActiveStory {
        self.app.world().resource::<ActiveStory>()
    }

    /// Run one engine update with `command`, print what it presented; true at an ending.
    fn send(&mut self, command: StoryCommand) -> io::Result<bool> {
        self.app.world_mut().write_message(command);
        self.app.update();
        let world = self.app.world_mut();
        let notices: Vec<StoryNotice> = world
            .resource_mut::<Messages<StoryNotice>>()
            .drain()
            .collect();
        let unlocked: Vec<CodexUnlocked> = world
            .resource_mut::<Messages<CodexUnlocked>>()
            .drain()
            .collect();
        let passages: Vec<PresentPassage> = world
            .resource_mut::<Messages<PresentPassage>>()
            .drain()
            .collect();
        for StoryNotice(text) in notices {
            writeln!(self.out, "{text}")?;
        }
        let mut ended = false;
        for present in passages {
            ended |= self.print_passage(&present)?;
        }
        for CodexUnlocked(tiers) in unlocked {
            let story = &self.active().package.story;
            let names: Vec<String> = tiers
                .iter()
                .map(|&c| {
                    let entry = story.codex_entry(c);
                    let entity = story.entity(story.codex_entity(c));
                    entry
                        .title
                        .clone()
                        .unwrap_or_else(|| format!("{} ({})", entity.name, entry.rank))
                })
                .collect();
            writeln!(self.out, "[codex] new: {}", names.join("; "))?;
        }
        Ok(ended)
    }

    fn print_passage(&mut self, present: &PresentPassage) -> io::Result<bool> {
        let story = self.active().package.story.clone();
        let passage = story.passage(present.passage);
        for &art in story.illustrations(present.passage) {
            let caption = &story.file().illustrations[art].caption;
            writeln!(self.out, "\n[illustration: {caption}]")?;
        }
        writeln!(self.out, "\n{}\n", passage.prose.trim())?;
        if let Some(title) = &present.ending {
            writeln!(self.out, "THE END: {title}")?;
            return Ok(true);
        }
        for choice in &present.choices {
            writeln!(self.out, "  {}. {}", choice.number, choice.label)?;
        }
        Ok(false)
    }

    fn print_codex(&mut self) -> io::Result<()> {
        let player = &self.app.world().resource::<ActiveStory>().player;
        let story = player.story();
        let pages = player.codex();
        if pages.is_empty() {
            return writeln!(self.out, "The codex is empty so far.");
        }
        for page in pages {
            let entity = story.entity(page.entity);
            writeln!(self.out, "\n{} ({})", entity.name, entity.kind)?;
            for tier in page.tiers {
                let entry = story.codex_entry(tier);
                let heading = entry.title.as_deref().unwrap_or("");
                writeln!(self.out, "  [{}] {heading}", entry.rank)?;
                for line in entry.content.trim().lines() {
                    writeln!(self.out, "      {line}")?;
                }
            }
        }
        Ok(())
    }

    fn print_state(&mut self) -> io::Result<()> {
        let player = &self.app.world().resource::<ActiveStory>().player;
        let story = player.story();
        writeln!(
            self.out,
            "At `{}`; {} visited, {} taken.",
            story.passage(player.current()).id,
            plural(player.visited_count(), "passage"),
            plural(player.history().len(), "choice")
        )?;
        let words: Vec<String> = player
            .held()
            .iter()
            .map(|c| {
                let codeword = &story.file().codewords[c.index()];
                codeword
                    .name
                    .as_ref()
                    .map_or_else(|| codeword.id.clone(), |n| format!("{n} ({})", codeword.id))
            })
            .collect();
        if words.is_empty() {
            writeln!(self.out, "Codewords: none")?;
        } else {
            writeln!(self.out, "Codewords: {}", words.join(", "))?;
        }
        for e in story.entities() {
            let details: Vec<String> = player
                .entity_state(e)
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect();
            writeln!(self.out, "{}: {}", story.entity(e).name, details.join("; "))?;
        }
        Ok(())
    }

    fn print_hidden(&mut self) -> io::Result<()> {
        let player = &self.app.world().resource::<ActiveStory>().player;
        let story = player.story();
        let mut any = false;
        for view in player.choices() {
            if let Availability::Hidden { missing } = &view.availability {
                any = true;
                let needs: Vec<&str> = missing.iter().map(|&c| story.codeword_id(c)).collect();
                writeln!(
                    self.out,
                    "hidden: \"{}\" needs {}",
                    view.choice.label,
                    needs.join(", ")
                )?;
            }
        }
        if !any {
            writeln!(self.out, "No choice is hidden here.")?;
        }
        Ok(())
    }

    fn save(&mut self, path: &str) -> io::Result<()> {
        if path.is_empty() {
            return writeln!(
                self.out,
                "`:save` needs a file name, like `:save slot1.json`"
            );
        }
        let doc = self.active().player.save();
        let result = serde_json::to_vec_pretty(&doc)
            .map_err(io::Error::other)
            .and_then(|bytes| crate::files::write_atomically(Path::new(path), &bytes));
        match result {
            Ok(()) => writeln!(self.out, "saved to {path}"),
            Err(err) => writeln!(self.out, "could not save to {path}: {err}"),
        }
    }

    fn read_save(path: &str) -> Result<SaveDocument, String> {
        if path.is_empty() {
            return Err("`:load` needs a file name, like `:load slot1.json`".to_owned());
        }
        let text =
            std::fs::read_to_string(path).map_err(|e| format!("could not read {path}: {e}"))?;
        serde_json::from_str(&text).map_err(|e| format!("{path} is not a readable save: {e}"))
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}
