"""Generate the shipped 3-class sentiment dataset (negative / neutral / positive).

Every text is composed here from small hand-written vocabularies and sentence templates
with a fixed seed, so the files are reproducible and owe nothing to any third-party corpus.
Labels follow tweet_eval/sentiment: 0 negative, 1 neutral, 2 positive.

Not all of it is easy, so the macro-recall target means something: besides plain texts there are
negations ("not bad at all", "not great"), sarcasm ("oh great, the train is late again"), mixed
texts whose last clause decides ("X was lovely but Y ruined it"), neutral texts full of emotive
words (reviews, polls, questions, reported speech), and a few labels flipped, as annotators disagree.

    python scripts/sentiment_data/generate.py          # rewrites train/validation/test.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

SEED = 20230317
LABELS = ("negative", "neutral", "positive")
SPLITS = {"train": 0.7, "validation": 0.15, "test": 0.15}

TOPICS = [
    "the new phone", "this coffee shop", "the morning train", "my flight", "the concert", "the app update",
    "the weather", "the game last night", "the new album", "customer service", "the traffic downtown",
    "my landlord", "the vaccine rollout", "the stock market", "the local library", "the season finale",
    "the pizza place on 5th", "my internet connection", "the city council", "the new bike lane",
    "the hospital wait", "the school board", "the football team", "the film festival", "the museum",
    "the bakery", "the electricity bill", "the new laptop", "the team meeting", "the weekend market",
    "the delivery service", "the hotel", "the airport", "the gym", "the podcast", "the bus route",
    "the election debate", "the product launch", "the software release", "the hiking trail",
]
PEOPLE = ["my boss", "my neighbour", "the coach", "our teacher", "the waiter", "my sister", "the driver",
          "the support agent", "my roommate", "the doctor", "the mayor", "the pilot"]
HASHTAGS_POS = ["#blessed", "#happy", "#win", "#grateful", "#goodvibes", "#love", "#fridayfeeling", "#yay"]
HASHTAGS_NEG = ["#fail", "#annoyed", "#ugh", "#fml", "#neveragain", "#disappointed", "#mondays", "#broken"]
HASHTAGS_NEU = ["#news", "#update", "#schedule", "#info", "#reminder", "#thursday", "#local", "#weather"]
EMOJI_POS = ["😍", "🙂", "🎉", "❤️", "👍", "😊", "🙌", ":)", ":D"]
EMOJI_NEG = ["😡", "😞", "😤", "👎", "😭", "🙄", ":(", "😩"]
EMOJI_NEU = ["📅", "📰", "🕒", "📍", ""]

POS_ADJ = ["amazing", "great", "awesome", "fantastic", "wonderful", "brilliant", "lovely", "excellent",
           "perfect", "superb", "delightful", "impressive", "fun", "incredible"]
NEG_ADJ = ["terrible", "awful", "horrible", "useless", "disappointing", "a disaster", "a mess", "broken",
           "pathetic", "miserable", "frustrating", "unbearable", "the worst", "dreadful"]
POS_VERB = ["love", "adore", "really enjoyed", "can't get enough of", "am so happy with", "am grateful for",
            "am impressed by", "am loving"]
NEG_VERB = ["hate", "can't stand", "am so tired of", "am fed up with", "regret trying", "am sick of",
            "am furious about", "am disappointed by"]
INTENS = ["", "", "really ", "so ", "totally ", "absolutely ", "seriously ", "incredibly "]
TIMES = ["today", "this morning", "tonight", "on Tuesday", "at 3pm", "next week", "tomorrow", "at noon",
         "on Friday", "this weekend", "in May", "at 9:30"]
PLACES = ["downtown", "at the station", "on Main Street", "in the park", "near the river", "at city hall",
          "in room 204", "online", "at the stadium", "on channel 4"]
NUMBERS = ["two", "three", "5", "10", "12", "20", "a few", "several"]

POSITIVE = [
    "{intens}{pos_adj} day thanks to {topic}",
    "I {pos_verb} {topic}",
    "{topic} was {intens}{pos_adj} {time}",
    "{topic} is {intens}{pos_adj}, highly recommend",
    "best experience ever with {topic}",
    "shoutout to {person} for being {intens}{pos_adj}",
    "{topic} just made my day",
    "can't stop smiling after {topic}",
    "finally got to try {topic} and it was {pos_adj}",
    "so proud of {person}, {pos_adj} work",
    "what a {pos_adj} surprise from {topic}",
    "{topic} exceeded all my expectations",
    "thank you {person}, you made {topic} {intens}{pos_adj}",
    "honestly {topic} keeps getting better",
    "covid cases are dropping fast, such good news",
    "cases are going down and {topic} reopened, so happy",
    "{topic} worked perfectly {time}",
    "good news: {topic} is back and it's {pos_adj}",
    "what a {pos_adj} time at {topic}, I loved it",
    "{topic} {time} was {intens}{pos_adj}, loved every minute",
]
NEGATIVE = [
    "{intens}{neg_adj} day because of {topic}",
    "I {neg_verb} {topic}",
    "{topic} was {intens}{neg_adj} {time}",
    "{topic} is {intens}{neg_adj}, avoid it",
    "worst experience ever with {topic}",
    "{person} was {intens}rude to me {time}",
    "{topic} just ruined my day",
    "waited {number} hours for {topic}, never again",
    "{topic} keeps crashing and nobody cares",
    "covid cases are increasing fast and {topic} is closed again",
    "cases are rising again, scary times",
    "{topic} got cancelled {time}, so upset",
    "why is {topic} always this {neg_adj}",
    "can't believe how {neg_adj} {topic} was",
    "lost {number} hours of my life to {topic}",
    "{topic} broke down {place} {time}, great, just great",
    "so angry at {person} right now",
    "prices keep increasing and {topic} keeps getting worse",
    "what a {neg_adj} time at {topic}, I hated it",
    "{topic} {time} was {intens}{neg_adj}, hated every minute",
]
NEUTRAL = [
    "{topic} is scheduled for {time}",
    "{topic} moves {place} starting {time}",
    "anyone know when {topic} opens {time}?",
    "reading an article about {topic}",
    "the report on {topic} comes out {time}",
    "{person} will talk about {topic} {time}",
    "{topic} will be announced {time}",
    "heading to {topic} {time}",
    "{number} people signed up for {topic} so far",
    "is {topic} open {place}?",
    "update on {topic}: details {time}",
    "{topic} is available {place} from {time}",
    "watching a documentary about {topic}",
    "covid case numbers for the region will be published {time}",
    "the meeting about {topic} is {place}",
    "{person} asked about {topic} {time}",
    "new schedule for {topic} posted {place}",
    "does anyone have the address for {topic}?",
    "what time does {topic} start {time}?",
    "{topic} {time}: doors open at 7",
]
# ---- the hard part: words of one class in texts of another
NEGATED_POS_ADJ = ["great", "good", "fun", "impressive", "amazing", "worth it", "perfect", "that good"]
NEGATED_NEG_ADJ = ["bad", "terrible", "awful", "that bad", "a disaster", "disappointing", "boring", "a problem"]
HARD_NEGATIVE = [
    # negations of praise
    "{topic} was not {negated_pos} {time}",
    "honestly {topic} is not {negated_pos}",
    "not gonna lie, {topic} was not {negated_pos}",
    "I don't love {topic} anymore",
    "{topic} is never {negated_pos}, not once",
    "can't say {topic} was {negated_pos}",
    # sarcasm: praise words around a complaint
    "oh great, {topic} is late again",
    "just {pos_adj}, {topic} broke down {place} {time}",
    "love waiting {number} hours for {topic}",
    "wow, {topic} {time}, what a {pos_adj} way to waste a day",
    "thanks a lot {person}, {topic} is ruined",
    "yeah {topic} was {pos_adj}... said no one ever",
    "so {pos_adj} that {topic} got cancelled {time}, really",
    # mixed: the last clause decides
    "{topic} started {pos_adj} but ended up {neg_adj}",
    "{topic} was {pos_adj} {time}, but {topic2} ruined it",
    "I wanted to love {topic} but it was {neg_adj}",
    "the first hour of {topic} was {pos_adj}, the rest was {neg_adj}",
]
HARD_POSITIVE = [
    # negations of complaints
    "{topic} was not {negated_neg} at all {time}",
    "honestly {topic} is not {negated_neg}",
    "not gonna lie, {topic} was not {negated_neg}",
    "I can't complain about {topic}",
    "never had a problem with {topic}, not once",
    "can't say {topic} was {negated_neg}, quite the opposite",
    "no complaints about {topic} {time}",
    # praise despite the bad
    "{topic} was late {time} but worth every minute",
    "{topic} started {neg_adj} but ended up {pos_adj}",
    "{topic} was {neg_adj} {time}, but {topic2} saved the day",
    "I expected {topic} to be {neg_adj} but it was {pos_adj}",
    "thought I would hate {topic}, turns out I love it",
    "the first hour of {topic} was {neg_adj}, the rest was {pos_adj}",
    "rain all day and {topic} still made me smile",
]
HARD_NEUTRAL = [
    # emotive words, no opinion of the writer's
    "a review calls {topic} {pos_adj}, another calls it {neg_adj}",
    "poll: is {topic} {pos_adj} or {neg_adj}?",
    "is {topic} really as {pos_adj} as people say?",
    "is {topic} really as {neg_adj} as people say?",
    "article: why some people {neg_verb_plain} {topic}",
    "article: why some people {pos_verb_plain} {topic}",
    "{person} said {topic} was {pos_adj}, will see {time}",
    "{person} said {topic} was {neg_adj}, will check {time}",
    "the survey asks whether {topic} is {neg_adj}",
    "the survey asks whether {topic} is {pos_adj}",
    "not sure yet what to think of {topic}",
    "{topic} was not open {time}, will try {place} instead",
    "the headline says {topic} is {pos_adj}, the report comes out {time}",
    "a thread on {topic}: some love it, some hate it",
    "{topic} rated {number} out of 10 in the survey {place}",
]
POS_VERB_PLAIN = ["love", "enjoy", "like", "adore", "praise"]
NEG_VERB_PLAIN = ["hate", "dislike", "complain about", "avoid", "criticise"]
HARD_TEMPLATES = {0: HARD_NEGATIVE, 1: HARD_NEUTRAL, 2: HARD_POSITIVE}
TEMPLATES = {0: NEGATIVE, 1: NEUTRAL, 2: POSITIVE}
DECOR = {
    0: (HASHTAGS_NEG, EMOJI_NEG, ["!!", "...", "!", "."]),
    1: (HASHTAGS_NEU, EMOJI_NEU, ["", ".", ""]),
    2: (HASHTAGS_POS, EMOJI_POS, ["!", "!!!", ".", ""]),
}
HARD_SHARE = 0.45  # texts from the hard templates
DECOR_MATCH = 0.6  # hashtags and emoji match the label this often, else any class's
LABEL_NOISE = 0.05  # labels flipped to another class: annotators disagree on short texts


def compose(rng: random.Random, label: int) -> str:
    hard = rng.random() < HARD_SHARE
    template = rng.choice((HARD_TEMPLATES if hard else TEMPLATES)[label])
    topic, topic2 = rng.sample(TOPICS, 2)
    text = template.format(
        topic=topic, topic2=topic2, person=rng.choice(PEOPLE), time=rng.choice(TIMES), place=rng.choice(PLACES),
        number=rng.choice(NUMBERS), intens=rng.choice(INTENS), pos_adj=rng.choice(POS_ADJ),
        neg_adj=rng.choice(NEG_ADJ), pos_verb=rng.choice(POS_VERB), neg_verb=rng.choice(NEG_VERB),
        negated_pos=rng.choice(NEGATED_POS_ADJ), negated_neg=rng.choice(NEGATED_NEG_ADJ),
        pos_verb_plain=rng.choice(POS_VERB_PLAIN), neg_verb_plain=rng.choice(NEG_VERB_PLAIN),
    )
    # decorations mostly match the label, sometimes not, so the model cannot lean on them alone
    deco_label = label if rng.random() < DECOR_MATCH else rng.choice(list(DECOR))
    hashtags, emojis, punctuation = DECOR[deco_label]
    if not text.endswith("?"):
        text += rng.choice(punctuation)
    if rng.random() < 0.3:  # tweets often start with a mention (tweet_eval masks them as @user)
        text = "@user " + text
    if rng.random() < 0.4:
        text += " " + rng.choice(emojis)
    if rng.random() < 0.35:
        text += " " + rng.choice(hashtags)
    if rng.random() < 0.1:
        text += " http"
    if rng.random() < 0.5:
        text = text[0].upper() + text[1:]
    return " ".join(text.split())


def generate(per_class: int = 500, seed: int = SEED) -> dict[str, list[dict]]:
    """`per_class` unique texts per label, shuffled and split 70/15/15 with no text in two splits."""
    rng = random.Random(seed)
    rows: list[dict] = []
    seen: set[str] = set()
    for label in TEMPLATES:
        made = 0
        while made < per_class:
            text = compose(rng, label)
            if text.lower() in seen:
                continue
            seen.add(text.lower())
            noisy = rng.random() < LABEL_NOISE
            rows.append({"text": text, "label": rng.choice([l for l in TEMPLATES if l != label]) if noisy else label})
            made += 1
    rng.shuffle(rows)
    out, start = {}, 0
    for i, (split, share) in enumerate(SPLITS.items()):
        end = len(rows) if i == len(SPLITS) - 1 else start + round(share * len(rows))
        out[split] = rows[start:end]
        start = end
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(Path(__file__).parent), help="folder for the .jsonl files")
    parser.add_argument("--per-class", type=int, default=500)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    for split, rows in generate(args.per_class, args.seed).items():
        path = Path(args.out) / f"{split}.jsonl"
        with path.open("w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"{path}: {len(rows)} rows")


if __name__ == "__main__":
    main()
