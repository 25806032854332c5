"""A deterministic airline sandbox: flights, fares, seat maps, holds, bookings and a money ledger in SQLite.

One database per item, created fresh from fixtures, owned by the harness: tools run against it in
harness code (and are logged there), and after the run the harness dumps it for the checks. Every
id is derived from counters, and the sandbox's clock is fixed, so the same calls give the same
database byte for byte.

The ledger is where money shows: a payment *intent* is prepared for an amount, then *captured*
(charged) or *voided*; captures can be *refunded*. Each ledger row records which call of the item
made it (`call_no`, the n-th tool call the sandbox executed), which ties it to the trace.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.for_arenas.directing import PerProcess

NOW = "2026-11-01T09:00"  # the sandbox clock: fixed, so holds and dumps are deterministic
HOLD_HOURS = 72

SCHEMA = """
CREATE TABLE flights (flight TEXT, date TEXT, origin TEXT, destination TEXT, depart TEXT, arrive TEXT,
                      stops INTEGER, via TEXT, aircraft TEXT, PRIMARY KEY (flight, date));
CREATE TABLE fares (flight TEXT, date TEXT, fare TEXT, price INTEGER, PRIMARY KEY (flight, date, fare));
CREATE TABLE passengers (name TEXT PRIMARY KEY, kind TEXT);
CREATE TABLE seats (flight TEXT, date TEXT, seat TEXT, holder TEXT, PRIMARY KEY (flight, date, seat));
CREATE TABLE holds (id TEXT PRIMARY KEY, segments TEXT, fare TEXT, passengers TEXT, price INTEGER, expires TEXT,
                    status TEXT);
CREATE TABLE pnrs (code TEXT PRIMARY KEY, passengers TEXT, status TEXT);
CREATE TABLE segments (pnr TEXT, n INTEGER, flight TEXT, date TEXT, fare TEXT, price INTEGER, status TEXT,
                       PRIMARY KEY (pnr, n));
CREATE TABLE intents (id TEXT PRIMARY KEY, ref TEXT, amount INTEGER, status TEXT, key TEXT, call_no INTEGER);
CREATE TABLE captures (id TEXT PRIMARY KEY, intent TEXT, amount INTEGER, call_no INTEGER);
CREATE TABLE refunds (id TEXT PRIMARY KEY, capture TEXT, amount INTEGER, call_no INTEGER);
CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER);
"""

# fare family -> (multiplier on the flight's base price, change fee, refundable, seat choice, bags)
FARES: dict[str, tuple[float, int, bool, bool, int]] = {
    "basic": (1.0, -1, False, False, 0),  # change fee -1: no changes at all
    "economy": (1.2, 75, False, True, 0),
    "main": (1.45, 0, False, True, 1),
    "flex": (2.1, 0, True, True, 1),
}
SEAT_LETTERS = "ABCDEF"
AISLE, WINDOW = ("C", "D"), ("A", "F")
ROWS = 30

# flight, origin, destination, depart, arrive, stops, via, aircraft, base price; flown every day
SCHEDULE: tuple[tuple[str, str, str, str, str, int, str, str, int], ...] = (
    ("FU101", "SFO", "ORD", "07:00", "13:10", 0, "", "A320", 190),
    ("FU103", "SFO", "ORD", "11:30", "17:45", 0, "", "A321", 165),
    ("FU105", "SFO", "ORD", "08:15", "16:05", 1, "DEN", "A320", 140),
    ("FU102", "ORD", "SFO", "09:00", "11:40", 0, "", "A320", 185),
    ("FU104", "ORD", "SFO", "18:20", "21:05", 0, "", "A321", 175),
    ("FU201", "BOS", "DEN", "06:10", "12:05", 1, "ORD", "A320", 290),
    ("FU203", "BOS", "DEN", "08:00", "11:10", 0, "", "A321", 460),
    ("FU205", "BOS", "DEN", "07:30", "12:50", 1, "ATL", "A320", 260),
    ("FU207", "BOS", "DEN", "13:00", "18:40", 1, "ORD", "A320", 240),
    ("FU301", "SFO", "IAD", "08:00", "16:20", 0, "", "A321", 210),
    ("FU303", "SFO", "IAD", "14:00", "22:15", 0, "", "A320", 200),
    ("FU311", "ORD", "SFO", "16:00", "18:45", 0, "", "A320", 180),
    ("FU401", "JFK", "LAX", "08:30", "11:55", 0, "", "A321", 230),
    ("FU403", "JFK", "LAX", "12:00", "15:20", 0, "", "A321", 250),
    ("FU405", "JFK", "LAX", "07:00", "12:30", 1, "DEN", "A320", 180),
    ("FU501", "LHR", "CDG", "07:30", "09:45", 0, "", "A320", 95),
    ("FU503", "LHR", "CDG", "09:15", "11:30", 0, "", "A320", 85),
    ("FU505", "LHR", "CDG", "12:00", "14:15", 0, "", "A320", 70),
    ("FU601", "SEA", "MIA", "06:00", "14:30", 0, "", "A321", 310),
    ("FU603", "SEA", "MIA", "10:00", "20:10", 1, "ATL", "A320", 240),
    # Denver to Boise has no 6 am nonstop, only a 6:40 one-stop and a 9:15 nonstop (interruptions, catalog T16)
    ("FU701", "DEN", "BOI", "06:40", "10:05", 1, "SLC", "A320", 160),
    ("FU703", "DEN", "BOI", "09:15", "10:40", 0, "", "A320", 200),
)
# the days flown, and how much dearer than the base price a day is
DATES: dict[str, float] = {"2026-11-06": 1.0, "2026-11-12": 1.0, "2026-11-13": 1.1, "2026-11-17": 1.0,
                           "2026-11-20": 1.0, "2026-11-23": 1.05, "2026-11-30": 1.0, "2026-12-05": 1.0,
                           "2026-12-20": 1.25}
BASE_PRICE = {flight: base for flight, *_rest, base in SCHEDULE}
PASSENGERS = {"Alex Rivera": "adult", "Sam Lee": "adult", "Jo Lee": "adult", "Kim Lee": "child", "Max Lee": "infant"}
# bookings that exist before the run: code, passengers, [(flight, date, fare, seat)]
EXISTING = (
    ("ABC123", ["Alex Rivera"], [("FU301", "2026-11-12", "economy", "12A")]),
    ("M7TQ2Z", ["Alex Rivera"], [("FU101", "2026-11-23", "flex", "14C"), ("FU311", "2026-11-30", "flex", "15D")]),
)


def fare_price(base: int, fare: str, date: str) -> int:
    return int(round(base * FARES[fare][0] * DATES.get(date, 1.0)))


def taken_by_fixture(flight: str, date: str, seat: str) -> bool:
    """About a third of every seat map is sold before the run, the same seats every time."""
    return hashlib.sha256(f"{flight}/{date}/{seat}".encode()).digest()[0] % 3 == 0


class SandboxError(Exception):
    """A request the airline refuses: the tool answers with its message, nothing changes."""


@dataclass
class Dump:
    """The sandbox after a run: `state` is the business state compared with the gold one; `ledger`
    adds, for every ledger row, the call that made it."""

    state: dict[str, list[dict[str, Any]]]
    ledger: dict[str, list[dict[str, Any]]]


# The fixtures, seeded once per process in memory: every sandbox starts as a copy of them (seeding ~11,000 seat
# rows per item was most of an item's cost). A forked worker seeds its own.
_fixtures: PerProcess[sqlite3.Connection] = PerProcess(lambda: Sandbox(":memory:", seed=True).db)


class Sandbox:
    def __init__(self, path: Path | str, *, seed: bool = False) -> None:
        """A sandbox in a new database at `path`: a copy of the process's fixtures, or seeded from them (`seed`)."""
        self.path = path
        self.db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self.db.row_factory = sqlite3.Row
        self.calls = 0  # tool calls executed so far (the ledger's `call_no`)
        if seed:
            self._seed()
        else:
            with _fixtures.lock:  # one copy at a time from the shared connection
                _fixtures.get().backup(self.db)

    # -- fixtures ------------------------------------------------------------------------------------

    def _seed(self) -> None:
        db = self.db
        db.executescript(SCHEMA)
        db.execute("BEGIN")
        for flight, origin, dest, dep, arr, stops, via, aircraft, base in SCHEDULE:
            for date in DATES:
                db.execute("INSERT INTO flights VALUES (?,?,?,?,?,?,?,?,?)",
                           (flight, date, origin, dest, dep, arr, stops, via, aircraft))
                for fare in FARES:
                    db.execute("INSERT INTO fares VALUES (?,?,?,?)", (flight, date, fare, fare_price(base, fare, date)))
                for row in range(1, ROWS + 1):
                    for letter in SEAT_LETTERS:
                        seat = f"{row}{letter}"
                        if taken_by_fixture(flight, date, seat):
                            db.execute("INSERT INTO seats VALUES (?,?,?,?)", (flight, date, seat, "(sold)"))
        for name, kind in PASSENGERS.items():
            db.execute("INSERT INTO passengers VALUES (?,?)", (name, kind))
        for code, people, legs in EXISTING:
            db.execute("INSERT INTO pnrs VALUES (?,?,?)", (code, json.dumps(people), "ticketed"))
            for n, (flight, date, fare, seat) in enumerate(legs, 1):
                price = self._price(flight, date, fare)
                db.execute("INSERT INTO segments VALUES (?,?,?,?,?,?,?)", (code, n, flight, date, fare, price, "confirmed"))
                db.execute("INSERT OR REPLACE INTO seats VALUES (?,?,?,?)", (flight, date, seat, f"{code}:{people[0]}"))
                intent = self._next("intent", "PI")
                db.execute("INSERT INTO intents VALUES (?,?,?,?,?,?)",
                           (intent, f"{code}/{n}", price, "captured", f"fixture:{code}/{n}", 0))
                db.execute("INSERT INTO captures VALUES (?,?,?,?)", (self._next("capture", "CP"), intent, price, 0))
        db.execute("COMMIT")

    def _next(self, name: str, prefix: str) -> str:
        row = self.db.execute("SELECT value FROM counters WHERE name = ?", (name,)).fetchone()
        value = (row["value"] if row else 0) + 1
        self.db.execute("INSERT OR REPLACE INTO counters VALUES (?,?)", (name, value))
        return f"{prefix}{value}"

    def _price(self, flight: str, date: str, fare: str) -> int:
        row = self.db.execute("SELECT price FROM fares WHERE flight=? AND date=? AND fare=?", (flight, date, fare)).fetchone()
        if row is None:
            raise SandboxError(f"no {fare} fare on {flight} on {date}")
        return int(row["price"])

    def _flight(self, flight: str, date: str) -> sqlite3.Row:
        row = self.db.execute("SELECT * FROM flights WHERE flight=? AND date=?", (flight, date)).fetchone()
        if row is None:
            raise SandboxError(f"there is no flight {flight} on {date}")
        return row

    # -- what the harness does around a run ----------------------------------------------------------

    def reprice(self, flight: str, date: str, fare: str, price: int) -> None:
        self.db.execute("UPDATE fares SET price=? WHERE flight=? AND date=? AND fare=?", (price, flight, date, fare))

    def expire_holds(self) -> None:
        self.db.execute("UPDATE holds SET status='expired' WHERE status='active'")

    def apply(self, event: dict[str, Any]) -> None:
        """A scripted change of the world (the items' `during_pause`): a fare re-priced, holds expired."""
        if "reprice" in event:
            r = event["reprice"]
            self.reprice(r["flight"], r["date"], r["fare"], int(r["price"]))
        if event.get("expire_holds"):
            self.expire_holds()

    def dump(self) -> Dump:
        """The database as data: every table but the fixtures that never change, rows sorted."""
        state: dict[str, list[dict[str, Any]]] = {}
        ledger: dict[str, list[dict[str, Any]]] = {}
        for table in ("holds", "pnrs", "segments", "seats", "intents", "captures", "refunds", "fares"):
            where = " WHERE holder != '(sold)'" if table == "seats" else ""
            rows = [dict(r) for r in self.db.execute(f"SELECT * FROM {table}{where}")]
            if table == "fares":  # only what moved away from the fixtures
                rows = [r for r in rows if r["price"] != self._base_price(r)]
            rows.sort(key=lambda r: json.dumps(r, sort_keys=True))
            if table in ("intents", "captures", "refunds"):
                ledger[table] = rows
            state[table] = [{k: v for k, v in r.items() if k != "call_no"} for r in rows]
        return Dump(state=state, ledger=ledger)

    def _base_price(self, row: dict[str, Any]) -> int:
        return fare_price(BASE_PRICE[row["flight"]], row["fare"], row["date"])

    def close(self) -> None:
        self.db.close()

    # -- tools (each returns the JSON text the model reads) -------------------------------------------

    def call(self, name: str, args: dict[str, Any]) -> str:
        """Run one tool in a transaction; a refusal or bad arguments change nothing."""
        self.calls += 1
        fn = getattr(self, f"tool_{name.replace('.', '_')}", None)
        if fn is None:
            return _json({"status": "ERROR", "error": f"unknown tool {name!r}"})
        self.db.execute("BEGIN")
        try:
            out = fn(**args)
        except SandboxError as exc:
            self.db.execute("ROLLBACK")
            return _json({"status": "REFUSED", "error": str(exc)})
        except (TypeError, KeyError, ValueError) as exc:
            self.db.execute("ROLLBACK")
            return _json({"status": "ERROR", "error": f"bad arguments for {name}: {exc}"})
        self.db.execute("COMMIT")
        return _json(out)

    def tool_search_flights(self, origin: str, destination: str, date: str) -> dict[str, Any]:
        rows = self.db.execute("SELECT * FROM flights WHERE origin=? AND destination=? AND date=? ORDER BY depart",
                               (str(origin).upper(), str(destination).upper(), str(date))).fetchall()
        flights = []
        for r in rows:
            prices = {f: self._price(r["flight"], r["date"], f) for f in FARES}
            flights.append({"flight": r["flight"], "date": r["date"], "origin": r["origin"],
                            "destination": r["destination"], "depart": r["depart"], "arrive": r["arrive"],
                            "stops": r["stops"], "via": r["via"] or None, "aircraft": r["aircraft"], "fares": prices})
        return {"flights": flights}

    def tool_fare_rules(self, fare: str) -> dict[str, Any]:
        if fare not in FARES:
            raise SandboxError(f"unknown fare family {fare!r}; fares are {', '.join(FARES)}")
        _, fee, refundable, seat_choice, bags = FARES[fare]
        return {"fare": fare, "changes": "not allowed" if fee < 0 else ("free" if fee == 0 else f"${fee} fee"),
                "change_fee": max(fee, 0), "changeable": fee >= 0, "refundable": refundable,
                "seat_selection": seat_choice, "checked_bags_included": bags}

    def tool_seat_map(self, flight: str, date: str) -> dict[str, Any]:
        row = self._flight(flight, date)
        taken = {r["seat"] for r in self.db.execute("SELECT seat FROM seats WHERE flight=? AND date=?", (flight, date))}
        free = [f"{n}{c}" for n in range(1, ROWS + 1) for c in SEAT_LETTERS if f"{n}{c}" not in taken]
        return {"flight": flight, "date": date, "aircraft": row["aircraft"], "rows": ROWS, "letters": SEAT_LETTERS,
                "aisle": list(AISLE), "window": list(WINDOW), "free": free}

    def tool_get_booking(self, pnr: str) -> dict[str, Any]:
        row = self.db.execute("SELECT * FROM pnrs WHERE code=?", (pnr,)).fetchone()
        if row is None:
            raise SandboxError(f"no booking {pnr!r}")
        segs = []
        for s in self.db.execute("SELECT * FROM segments WHERE pnr=? ORDER BY n", (pnr,)):
            flight = self._flight(s["flight"], s["date"])
            seats = [r["seat"] for r in self.db.execute("SELECT seat FROM seats WHERE flight=? AND date=? AND holder LIKE ?",
                                                        (s["flight"], s["date"], f"{pnr}:%"))]
            segs.append({"n": s["n"], "flight": s["flight"], "date": s["date"], "origin": flight["origin"],
                         "destination": flight["destination"], "depart": flight["depart"], "fare": s["fare"],
                         "price": s["price"], "status": s["status"], "seats": sorted(seats)})
        return {"pnr": pnr, "passengers": json.loads(row["passengers"]), "status": row["status"], "segments": segs}

    # consequential tools

    def _passengers(self, passengers: list[str]) -> list[str]:
        unknown = [p for p in passengers if p not in PASSENGERS]
        if unknown or not passengers:
            raise SandboxError(f"unknown passenger {unknown[0]!r}" if unknown else "no passengers")
        return list(passengers)

    def _segments(self, segments: list[dict[str, Any]]) -> list[tuple[str, str]]:
        out = []
        for s in segments:
            self._flight(s["flight"], s["date"])
            out.append((str(s["flight"]), str(s["date"])))
        if not out:
            raise SandboxError("no segments")
        return out

    def _quote(self, segs: list[tuple[str, str]], fare: str, passengers: list[str]) -> int:
        paying = [p for p in passengers if PASSENGERS[p] != "infant"]  # a lap infant flies free
        return sum(self._price(f, d, fare) for f, d in segs) * len(paying)

    def _seat(self, flight: str, date: str, seat: str, holder: str) -> None:
        if self.db.execute("SELECT 1 FROM seats WHERE flight=? AND date=? AND seat=?", (flight, date, seat)).fetchone():
            raise SandboxError(f"seat {seat} on {flight} is not free")
        self.db.execute("INSERT INTO seats VALUES (?,?,?,?)", (flight, date, seat, holder))

    def _charge(self, ref: str, amount: int, key: str) -> str:
        """Prepare and capture at once. `key` names the payment (its idempotency key): the same booking,
        change or purchase always has the same key, so a payment made twice shows as one key twice."""
        intent = self._next("intent", "PI")
        self.db.execute("INSERT INTO intents VALUES (?,?,?,?,?,?)", (intent, ref, amount, "captured", key, self.calls))
        self.db.execute("INSERT INTO captures VALUES (?,?,?,?)", (self._next("capture", "CP"), intent, amount, self.calls))
        return intent

    def tool_hold_fare(self, segments: list[dict[str, Any]], fare: str, passengers: list[str]) -> dict[str, Any]:
        segs, people = self._segments(segments), self._passengers(passengers)
        price = self._quote(segs, fare, people)
        hold = self._next("hold", "H")
        expires = "2026-11-04T09:00"  # NOW + HOLD_HOURS
        self.db.execute("INSERT INTO holds VALUES (?,?,?,?,?,?,?)",
                        (hold, json.dumps([list(s) for s in segs]), fare, json.dumps(people), price, expires, "active"))
        return {"status": "HELD", "hold": hold, "price": price, "expires": expires, "charged": 0}

    def tool_book_flight(self, segments: list[dict[str, Any]], fare: str, passengers: list[str],
                         seats: list[dict[str, Any]] | None = None, amount: int | None = None) -> dict[str, Any]:
        segs, people = self._segments(segments), self._passengers(passengers)
        price = self._quote(segs, fare, people)
        if amount is None or int(amount) != price:
            raise SandboxError(f"PRICE_CHANGED: the total is now ${price}, not ${amount}; nothing was charged")
        if seats and not FARES[fare][3]:
            raise SandboxError(f"the {fare} fare does not allow seat selection")
        pnr = self._pnr()
        self.db.execute("INSERT INTO pnrs VALUES (?,?,?)", (pnr, json.dumps(people), "ticketed"))
        for n, (flight, date) in enumerate(segs, 1):
            self.db.execute("INSERT INTO segments VALUES (?,?,?,?,?,?,?)",
                            (pnr, n, flight, date, fare, self._price(flight, date, fare), "confirmed"))
        for s in seats or []:
            self._seat(str(s["flight"]), str(s["date"]), str(s["seat"]), f"{pnr}:{s['passenger']}")
        key = "book:" + json.dumps([[list(s) for s in segs], fare, people])
        self._charge(pnr, price, key)
        return {"status": "BOOKED", "pnr": pnr, "charged": price}

    def _pnr(self) -> str:
        return f"NEW{int(self._next('pnr', '')):03d}"

    def tool_change_flight(self, pnr: str, flight: str, new_flight: str, new_date: str, amount: int) -> dict[str, Any]:
        seg = self.db.execute("SELECT * FROM segments WHERE pnr=? AND flight=? AND status='confirmed'", (pnr, flight)).fetchone()
        if seg is None:
            raise SandboxError(f"booking {pnr} has no confirmed segment on {flight}")
        fee = FARES[seg["fare"]][1]
        if fee < 0:
            raise SandboxError(f"the {seg['fare']} fare cannot be changed")
        new_price = self._price(new_flight, new_date, seg["fare"])
        due = max(0, new_price - seg["price"]) + fee
        if int(amount) != due:
            raise SandboxError(f"PRICE_CHANGED: the change costs ${due} now, not ${amount}; nothing was charged")
        self._flight(new_flight, new_date)
        self.db.execute("UPDATE segments SET flight=?, date=?, price=? WHERE pnr=? AND n=?",
                        (new_flight, new_date, new_price, pnr, seg["n"]))
        moved = self.db.execute("SELECT seat, holder FROM seats WHERE flight=? AND date=? AND holder LIKE ?",
                                (flight, seg["date"], f"{pnr}:%")).fetchall()
        for r in moved:  # the same seat on the new flight if it is free; otherwise none (choose one later)
            self.db.execute("DELETE FROM seats WHERE flight=? AND date=? AND seat=?", (flight, seg["date"], r["seat"]))
            free = not self.db.execute("SELECT 1 FROM seats WHERE flight=? AND date=? AND seat=?",
                                       (new_flight, new_date, r["seat"])).fetchone()
            if free:
                self._seat(new_flight, new_date, r["seat"], r["holder"])
        if due:
            self._charge(f"{pnr}/{seg['n']}/change", due, f"change:{pnr}/{seg['n']}:{new_flight}/{new_date}")
        return {"status": "CHANGED", "pnr": pnr, "flight": new_flight, "date": new_date, "charged": due}

    def tool_cancel_flight(self, pnr: str, flight: str) -> dict[str, Any]:
        seg = self.db.execute("SELECT * FROM segments WHERE pnr=? AND flight=? AND status='confirmed'", (pnr, flight)).fetchone()
        if seg is None:
            raise SandboxError(f"booking {pnr} has no confirmed segment on {flight}")
        self.db.execute("UPDATE segments SET status='cancelled' WHERE pnr=? AND n=?", (pnr, seg["n"]))
        self.db.execute("DELETE FROM seats WHERE flight=? AND date=? AND holder LIKE ?", (flight, seg["date"], f"{pnr}:%"))
        refund = seg["price"] if FARES[seg["fare"]][2] else 0
        if refund:
            capture = self.db.execute(
                "SELECT c.id FROM captures c JOIN intents i ON c.intent = i.id WHERE i.ref = ?", (f"{pnr}/{seg['n']}",)
            ).fetchone()
            if capture is None:
                raise SandboxError(f"no payment to refund for {pnr} segment {seg['n']}")
            self.db.execute("INSERT INTO refunds VALUES (?,?,?,?)", (self._next("refund", "RF"), capture["id"], refund, self.calls))
        return {"status": "CANCELLED", "pnr": pnr, "flight": flight, "refunded": refund}

    # purchase_hold: prepare (a payment intent for the hold's price), [the pause], commit or abort.

    def _active_hold(self, hold: str) -> sqlite3.Row:
        row = self.db.execute("SELECT * FROM holds WHERE id=?", (hold,)).fetchone()
        if row is None:
            raise SandboxError(f"no hold {hold!r}")
        return row

    def _hold_price(self, row: sqlite3.Row) -> int:
        """The held price while the hold is active; the current price once it has expired."""
        if row["status"] == "active":
            return int(row["price"])
        segs = [tuple(s) for s in json.loads(row["segments"])]
        return self._quote(segs, row["fare"], json.loads(row["passengers"]))

    def tool_purchase_hold_prepare(self, hold: str) -> dict[str, Any]:
        row = self._active_hold(hold)
        if row["status"] == "purchased":
            raise SandboxError(f"hold {hold} was already purchased")
        amount = self._hold_price(row)
        intent = self._next("intent", "PI")
        self.db.execute("INSERT INTO intents VALUES (?,?,?,?,?,?)",
                        (intent, f"hold/{hold}", amount, "prepared", f"purchase:{hold}", self.calls))
        return {"status": "PREPARED", "intent": intent, "hold": hold, "amount": amount}

    def tool_purchase_hold_commit(self, intent: str) -> dict[str, Any]:
        row = self.db.execute("SELECT * FROM intents WHERE id=?", (intent,)).fetchone()
        if row is None or row["status"] != "prepared":
            raise SandboxError(f"no prepared payment {intent!r}")
        hold = self._active_hold(row["ref"].split("/", 1)[1])
        price = self._hold_price(hold)
        if price != row["amount"]:  # refused, and the stale intent is voided
            self.db.execute("UPDATE intents SET status='voided' WHERE id=?", (intent,))
            return {"status": "PRICE_CHANGED", "error": f"hold {hold['id']} is {hold['status']}; the fare is now "
                    f"${price}, not ${row['amount']}; nothing was charged", "price": price, "charged": 0}
        self.db.execute("UPDATE intents SET status='captured' WHERE id=?", (intent,))
        self.db.execute("INSERT INTO captures VALUES (?,?,?,?)", (self._next("capture", "CP"), intent, price, self.calls))
        pnr = self._pnr()
        people = json.loads(hold["passengers"])
        self.db.execute("INSERT INTO pnrs VALUES (?,?,?)", (pnr, json.dumps(people), "ticketed"))
        for n, (flight, date) in enumerate(json.loads(hold["segments"]), 1):
            self.db.execute("INSERT INTO segments VALUES (?,?,?,?,?,?,?)",
                            (pnr, n, flight, date, hold["fare"], self._price(flight, date, hold["fare"]), "confirmed"))
        self.db.execute("UPDATE holds SET status='purchased' WHERE id=?", (hold["id"],))
        return {"status": "PURCHASED", "pnr": pnr, "charged": price}

    def tool_purchase_hold_abort(self, intent: str) -> dict[str, Any]:
        row = self.db.execute("SELECT * FROM intents WHERE id=?", (intent,)).fetchone()
        if row is None or row["status"] != "prepared":
            raise SandboxError(f"no prepared payment {intent!r}")
        self.db.execute("UPDATE intents SET status='voided' WHERE id=?", (intent,))
        return {"status": "VOIDED", "intent": intent, "charged": 0}

    def tool_purchase_hold(self, hold: str) -> dict[str, Any]:
        """The whole purchase in one call (prepare, then commit), for a framework that holds it before the call."""
        prepared = self.tool_purchase_hold_prepare(hold)
        return self.tool_purchase_hold_commit(prepared["intent"])


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
