;; Loops over tasks written in the DSL: refine (SPEC §2.7, §9 Loops). (being written)
