//! all-MiniLM-L6-v2 on candle against reference vectors from an independent implementation.
//!
//! all-MiniLM-L6-v2 on candle against reference vectors from an independent numpy implementation
//! (`tests/fixtures/minilm/make_reference.py`): every sentence at cosine ≥ 0.999, batches equal to
//! single inputs, unrelated pairs far apart.
#![cfg(feature = "embed")]

use std::path::PathBuf;

use loreloom::memory::embed::MiniLm;
use loreloom::memory::{DIM, Embedder, cosine, default_model_dir, dot};
use serde_json::Value;

fn reference() -> Value {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/minilm/reference.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn model() -> MiniLm {
    MiniLm::load(&default_model_dir())
        .unwrap_or_else(|e| panic!("{e} (run `./run.sh test`, which installs it)"))
}

fn vector(v: &Value) -> Vec<f32> {
    #[allow(clippy::cast_possible_truncation)]
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

#[test]
fn vectors_match_the_independent_reference_in_a_batch_and_one_by_one() {
    let model = model();
    let r = reference();
    let sentences = r["sentences"].as_array().unwrap();
    let texts: Vec<&str> = sentences
        .iter()
        .map(|s| s["text"].as_str().unwrap())
        .collect();
    let batch = model.embed(&texts).unwrap();
    assert_eq!(batch.len(), texts.len());
    let mut worst = 1.0_f32;
    for ((s, got), text) in sentences.iter().zip(&batch).zip(&texts) {
        let want = vector(&s["vector"]);
        assert_eq!(got.len(), DIM);
        assert!((dot(got, got) - 1.0).abs() < 1e-4, "not unit length");
        assert_eq!(
            model.token_count(text),
            usize::try_from(s["tokens"].as_u64().unwrap()).unwrap(),
            "{text}"
        );
        let c = cosine(got, &want);
        worst = worst.min(c);
        assert!(c >= 0.999, "{text:?}: cosine {c} to the reference");
        // Alone, without the batch's padding, the same vector.
        let alone = model.embed(&[text]).unwrap().pop().unwrap();
        assert!(
            cosine(&alone, got) >= 0.9999,
            "{text:?}: padding changed the vector"
        );
    }
    println!(
        "{} sentences, worst cosine to the reference {worst:.6}",
        texts.len()
    );
}

#[test]
fn pair_similarities_match_the_reference_and_unrelated_pairs_score_low() {
    let model = model();
    let r = reference();
    for p in r["pairs"].as_array().unwrap() {
        let (a, b) = (p["a"].as_str().unwrap(), p["b"].as_str().unwrap());
        let v = model.embed(&[a, b]).unwrap();
        let got = dot(&v[0], &v[1]);
        #[allow(clippy::cast_possible_truncation)]
        let want = p["cosine"].as_f64().unwrap() as f32;
        assert!((got - want).abs() < 2e-3, "{a:?} ~ {b:?}: {got} vs {want}");
        if p["note"] == "unrelated" {
            // With padding to 128 tokens pooled in, these scored 0.8–0.9.
            assert!(got < 0.2, "{a:?} ~ {b:?}: {got}");
        }
    }
}

#[test]
fn a_missing_model_folder_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = MiniLm::load(dir.path()).unwrap_err().to_string();
    assert!(err.contains("missing") && err.contains("./run.sh"), "{err}");
}
