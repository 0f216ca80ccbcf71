//! A component's state moved out whole, for a reloaded net's component of the same
//! definition: the tokens are not copied, and the component it goes into keeps
//! its own configuration (zone ids, shared-index numbers) where it has any.

use std::borrow::Cow;

use super::{Component, ComponentState};

impl Component {
    /// The component's state, owned (nothing is copied).
    pub(crate) fn into_state(self) -> ComponentState<'static> {
        match self {
            Component::Pair(u) => ComponentState::Pair(Cow::Owned(u)),
            Component::Not(u) => ComponentState::Not(Cow::Owned(u)),
            Component::Any(u) => ComponentState::Any(Cow::Owned(u)),
            Component::Times(u) => ComponentState::Times(Cow::Owned(u)),
            Component::Interval(u) => ComponentState::Interval(Cow::Owned(u)),
            Component::Toggle(u) => ComponentState::Toggle(Cow::Owned(u)),
            Component::Stationary(u) => ComponentState::Stationary(Cow::Owned(u)),
            Component::Silent(u) => ComponentState::Silent(Cow::Owned(u)),
            Component::Lasting(u) => ComponentState::Lasting(Cow::Owned(u)),
            Component::Close(u) => ComponentState::Close(Cow::Owned(u)),
            Component::Combine(u) => ComponentState::Combine(Cow::Owned(u)),
            Component::During(u) => ComponentState::During(Cow::Owned(u)),
            Component::Guard(_)
            | Component::Count(_)
            | Component::Stab(_)
            | Component::Served
            | Component::Phase(_) => ComponentState::Stateless,
        }
    }

    /// Does the component keep anything between events in itself (the counting
    /// indexes are kept by the detector)?
    pub(crate) fn holds_state(&self) -> bool {
        !matches!(
            self,
            Component::Guard(_)
                | Component::Count(_)
                | Component::Stab(_)
                | Component::Served
                | Component::Phase(_)
        )
    }
}
