"""The documents items start from (built into a fresh .docx per item by `document.build`).

Segments: ["t", text] plain, ["ins"|"del", text, author] a tracked change; tracked changes are
numbered 1, 2, ... in document order. Comments are numbered 0, 1, ... in order, replies after them.
Adapted from the catalog's contract (T01, T02, T03) and handbook (T04) documents.
"""

from __future__ import annotations

from typing import Any

ALICE, BOB, DANA, EVAN = "Alice Chen", "Bob Ortiz", "Dana Reyes", "Evan Park"

FIXTURES: dict[str, dict[str, Any]] = {
    "contract": {
        "paragraphs": [
            [["t", "The Supplier shall deliver the "], ["ins", "Goods", ALICE], ["del", "products", ALICE],
             ["t", " within "], ["del", "thirty", BOB], ["ins", "fifteen", BOB], ["t", " days of the order."]],
            [["t", "Payment is due "], ["del", "net 30", BOB], ["ins", "net 60", BOB],
             ["t", " after invoice. The colour of the packaging is agreed seperately."]],
            [["t", "\"Confidential Information\" means any information marked "], ["ins", "as ", ALICE],
             ["t", "confidential by either party."]],
        ],
        "comments": [
            {"paragraph": 1, "author": BOB, "text": "Can we move to net 60?"},
            {"paragraph": 2, "author": ALICE, "text": "Should oral disclosures count?"},
        ],
    },
    "handbook": {
        "paragraphs": [
            [["t", "Employees "], ["del", "recieve", DANA], ["ins", "receive", DANA], ["t", " "],
             ["del", "twenty", EVAN], ["ins", "twenty-five", EVAN], ["t", " days of paid leave each year."]],
            [["t", "A "], ["del", "\"Full-Time Employee\"", EVAN], ["ins", "\"Regular Employee\"", EVAN],
             ["t", " works at least 30 hours a week in the "], ["del", "offfice", DANA], ["ins", "office", DANA],
             ["t", "."]],
            [["t", "Leave requests must be submited in writing to the manager."]],
        ],
        "comments": [
            {"paragraph": 0, "author": DANA, "text": "Is 25 days approved by HR?"},
            {"paragraph": 2, "author": EVAN, "text": "Typo in this sentence.",
             "replies": [{"author": DANA, "text": "Agreed, please fix it as a suggestion."}]},
        ],
    },
}
