// Question answering as the copy paper tests it (Jelassi et al. 2024, section 5): SQuAD v2
// paragraphs, one solved question as an example, then another question about the same
// paragraph, scored by exact match and F1 against its gold answers.
//
// The file format is SQuAD v2's (the train or dev JSON a user downloads):
//   {"version": ..., "data": [{"title": T, "paragraphs": [{"context": C,
//     "qas": [{"id": I, "question": Q, "is_impossible": false, "answers": [{"text": A, "answer_start": N}, ...]}, ...]}]}]}
// Questions marked is_impossible, or with no answer, are left out (the test needs an answer).
//
// Scoring is SQuAD's official (evaluate-v2.0.py): an answer is normalised by lower-casing,
// deleting punctuation (string.punctuation), replacing the articles a, an, the by a space and
// collapsing white space; exact match compares the normalised strings; F1 is over the
// normalised words (multiset overlap), 1 when both are empty and 0 when only one is; each is the
// maximum over the gold answers. The authors' code (pretrained_exps/qa_evaluation_utils.py)
// differs in two ways this follows the official script on: it replaces punctuation, curly
// quotes, backticks and underscores by spaces instead of deleting them (so "1,000" is two words
// there, one here), and it scores an empty prediction 0 even against an empty answer.
#pragma once

#include <QString>
#include <QStringList>

#include <vector>

namespace parrot {

class BpeTokenizer;

struct QaQuestion {
    QString id;
    QString question;
    QStringList answers;  // the gold answers, in the file's order (at least one)
};

struct QaParagraph {
    QString title;
    QString context;
    std::vector<QaQuestion> questions;  // the answerable ones
};

// Reads a SQuAD v1.1 or v2 file; only paragraphs with at least two answerable questions are
// kept (one is the example, one is asked). Throws parrot::Error naming the file and the place
// for anything malformed, and when no paragraph is usable.
std::vector<QaParagraph> readSquad(const QString& path);
// The bundled set (resources/data/alice-qa.json): questions written for this project over
// passages of Alice's Adventures in Wonderland (public domain); the set is CC0.
QString bundledSquadPath();

QString normalizeAnswer(const QString& s);
bool exactMatch(const QString& prediction, const QString& gold);
double f1Score(const QString& prediction, const QString& gold);
// The maximum of each over the gold answers (0 for none).
double bestExactMatch(const QString& prediction, const QStringList& golds);
double bestF1(const QString& prediction, const QStringList& golds);

// The authors' prompt: "CONTEXT\n\nQuestion: Q1\nAnswer: A1\n\nQuestion: Q\nAnswer: ", with the
// first gold answer of the example question.
QString squadPrompt(const QaParagraph& p, int example, int asked);
// What a greedy continuation answers: the text up to its first blank line, cut at
// <|endoftext|>, trimmed (the authors' post-processing).
QString squadAnswer(const QString& continuation);

}  // namespace parrot
