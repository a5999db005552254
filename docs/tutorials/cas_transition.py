# %% [markdown]
# # cas_transition

# %%
print(1 + 1)
