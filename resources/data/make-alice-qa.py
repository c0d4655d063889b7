#!/usr/bin/env python3
"""Writes alice-qa.json, the bundled question-answering set, in SQuAD v2's JSON format.

The contexts are paragraphs of alice.txt (Lewis Carroll, public domain), one or several in a
row; the questions and answers are this project's own, released under CC0 1.0. Each answer is
a span of its context (answer_start is found here), so the file is checked as it is written.
Run from this folder:  python3 make-alice-qa.py > alice-qa.json
"""
import json
import sys

with open("alice.txt", encoding="utf-8") as f:
    LINES = f.read().split("\n")  # line n of the file is LINES[n - 1]

# (the paragraphs by line number, [(question, [answers...]), ...]); the first question of each
# is the one the test shows answered, the second the one it asks.
ITEMS = [
    ([5], [("Who was Alice sitting by on the bank?", ["her sister"]),
           ("What did the book her sister was reading have no pictures or of?", ["conversations"]),
           ("How often had Alice peeped into the book?", ["once or twice"])]),
    ([6], [("What was Alice thinking of making?", ["a daisy-chain", "daisy-chain"]),
           ("What colour were the White Rabbit's eyes?", ["pink"]),
           ("What made Alice feel very sleepy and stupid?", ["the hot day"])]),
    ([9], [("What did the rabbit-hole go straight on like?", ["a tunnel"]),
           ("What did Alice find herself falling down?", ["a very deep well"])]),
    ([10], [("What were the sides of the well filled with?", ["cupboards and book-shelves"]),
            ("What was the jar labelled?", ["ORANGE MARMALADE"]),
            ("Where did Alice put the jar?", ["into one of the cupboards", "one of the cupboards"])]),
    ([14], [("Who was Dinah?", ["the cat"]),
            ("What did Alice come down upon when the fall was over?", ["a heap of sticks and dry leaves"]),
            ("What might Dinah catch in the air instead of mice?", ["a bat"])]),
    ([20], [("What does a red-hot poker do if you hold it too long?", ["burn you"]),
            ("What word was Alice looking for on the bottle?", ["poison"]),
            ("What did the bottle say?", ["Drink me"])]),
    ([38], [("Whose hair goes in such long ringlets?", ["Ada"]),
            ("Who did Alice think she had been changed for?", ["Mabel"]),
            ("What did Alice say four times five is?", ["twelve"])]),
    ([140], [("What did Alice hold out to the puppy?", ["a little bit of stick"]),
             ("What did Alice dodge behind?", ["a great thistle"]),
             ("What was playing with the puppy very like, Alice thought?", ["a game of play with a cart-horse"])]),
    ([218], [("How high was the little house?", ["about four feet high", "four feet"]),
             ("How high did Alice make herself before going near the house?", ["nine inches high", "nine inches"]),
             ("Which bit did Alice nibble at again?", ["the righthand bit"])]),
    ([446], [("What did Alice find hardest to manage at first?", ["her flamingo", "flamingo"]),
             ("What had unrolled itself?", ["the hedgehog"]),
             ("What were always getting up and walking off?", ["the doubled-up soldiers"])]),
    ([7, 8], [("What did the Rabbit take out of its waistcoat-pocket?", ["A WATCH", "a watch"]),
              ("Where did the Rabbit pop down?", ["a large rabbit-hole under the hedge"]),
              ("What did the Rabbit say to itself?", ["Oh dear! Oh dear! I shall be late!"])]),
    ([11, 12, 13], [("How many miles down did Alice think the centre of the earth would be?", ["four thousand miles"]),
                    ("Which countries did Alice think of asking about?", ["New Zealand or Australia"]),
                    ("What did Alice call the people that walk with their heads downward?", ["The Antipathies"])]),
    ([5, 6, 7, 8], [("Who ran close by Alice?", ["a White Rabbit with pink eyes", "a White Rabbit"]),
                    ("What did Alice run across after the Rabbit?", ["the field"]),
                    ("Where was Alice sitting?", ["on the bank", "by her sister on the bank"])]),
    ([9, 10, 11, 12, 13, 14], [("What hung upon pegs on the sides of the well?", ["maps and pictures"]),
                               ("What words did Alice think were nice grand words to say?", ["Latitude or Longitude",
                                                                                             "Latitude", "Longitude"]),
                               ("Who did Alice dream she was walking hand in hand with?", ["Dinah"])]),
]


def main():
    data = []
    for n, (lines, qas) in enumerate(ITEMS):
        context = " ".join(LINES[i - 1] for i in lines)
        out = []
        for k, (question, answers) in enumerate(qas):
            spans = []
            for a in answers:
                at = context.find(a)
                if at < 0:
                    sys.exit(f"item {n}: answer {a!r} is not in its context")
                spans.append({"text": a, "answer_start": at})
            out.append({"id": f"alice-{n:02d}-{k}", "question": question, "is_impossible": False, "answers": spans})
        data.append({"title": f"Alice's Adventures in Wonderland, paragraphs {lines[0]}-{lines[-1]} of alice.txt",
                     "paragraphs": [{"context": context, "qas": out}]})
    json.dump({"version": "v2.0",
               "license": "The questions and answers: CC0 1.0 (public domain dedication), written for Parrotscope. "
                          "The contexts: Lewis Carroll, Alice's Adventures in Wonderland (1865), public domain.",
               "data": data}, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")


main()
