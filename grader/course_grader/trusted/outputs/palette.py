"""The colours of the grader's figures: Okabe and Ito's palette, told apart with colour-blind vision too."""

OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
