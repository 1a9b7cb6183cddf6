"""The TA's side of grading: everything here runs outside the student's sandbox."""
