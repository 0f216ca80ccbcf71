//! Random nets mixing states with other operators.
