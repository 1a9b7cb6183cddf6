"""What the gradebook remembers: its rows, the ledger of graded hand-ins, the replay records, the reveal schedule and a submission's outcome."""
