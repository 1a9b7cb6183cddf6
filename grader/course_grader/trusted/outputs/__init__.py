"""What people read: feedback pages, the report, the exports, the item analysis, the similarity review, and the escaping of student text for each format."""
