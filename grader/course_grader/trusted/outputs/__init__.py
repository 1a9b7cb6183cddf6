"""What people read: feedback pages, the report, the exports, the item analysis and the similarity review."""
